-- evidence: the fingerprints of the responses to compare (temp table text_responses, filled by the caller), with their request's tenant, model and time.
CREATE OR REPLACE TEMP TABLE text_resp_fps AS
SELECT f.row_id, f.hash, f.pos, r.tenant_id, r.model, r.ts
FROM text_fingerprints f
SEMI JOIN text_responses t ON t.row_id = f.row_id
JOIN requests r ON r.row_id = f.row_id
WHERE f.kind = 1;
