-- evidence: the response fingerprints that can carry weight: held by the prompts of fewer than common_tenants tenants of the model, and not by the response's own prompt (the own prompts' fingerprints read by an inner join on the responses' row_ids, as in evidence_10).
CREATE OR REPLACE TEMP TABLE text_rare_fps AS
WITH own AS (
    SELECT o.row_id, o.hash
    FROM text_fingerprints o
    JOIN (SELECT DISTINCT row_id FROM text_responses) t ON t.row_id = o.row_id
)
SELECT r.*
FROM text_resp_fps r
ANTI JOIN own o ON o.row_id = r.row_id AND o.hash = r.hash
LEFT JOIN text_spec s ON s.model = r.model AND s.hash = r.hash
WHERE coalesce(s.tenants, 0) < (SELECT common_tenants FROM text_params);
