-- evidence: the fingerprints of the responses to compare (text_resp_hashes), with their request's tenant, model and time.
CREATE OR REPLACE TEMP TABLE text_resp_fps AS
SELECT f.row_id, f.hash, r.tenant_id, r.model, r.ts
FROM text_resp_hashes f
JOIN requests r ON r.row_id = f.row_id;
