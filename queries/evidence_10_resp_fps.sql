-- evidence: the fingerprints of the responses to compare (temp table text_responses, filled by the caller), with their request's tenant, model and time (an inner join on the distinct responses, not a semi-join: DuckDB then filters the fingerprints' scan by the responses' row_ids, and reads the other columns of those rows only).
CREATE OR REPLACE TEMP TABLE text_resp_fps AS
SELECT f.row_id, f.hash, r.tenant_id, r.model, r.ts
FROM text_fingerprints f
JOIN (SELECT DISTINCT row_id FROM text_responses) t ON t.row_id = f.row_id
JOIN requests r ON r.row_id = f.row_id
WHERE f.kind = 1;
