-- evidence: how specific each response fingerprint is: the distinct tenants whose prompts of that model hold it, over the whole case, kept only when 2 or more (any common_tenants is at least 2: fewer carry weight alike); a semi-join on the responses' fingerprints, not a full index.
CREATE OR REPLACE TEMP TABLE text_spec AS
WITH h AS (SELECT DISTINCT model, hash FROM text_resp_fps),
pf AS (
    SELECT f.row_id, f.hash
    FROM text_fingerprints f
    SEMI JOIN (SELECT DISTINCT hash FROM h) x ON x.hash = f.hash
    WHERE f.kind = 0
)
SELECT r.model, pf.hash, count(DISTINCT r.tenant_id) AS tenants
FROM pf
JOIN requests r ON r.row_id = pf.row_id
SEMI JOIN h ON h.hash = pf.hash AND h.model = r.model
GROUP BY ALL
HAVING count(DISTINCT r.tenant_id) >= 2;
