-- sweep: candidate pairs: a response and an earlier served prompt of another tenant of the same model (any instance) sharing a fingerprint that can carry weight.
CREATE OR REPLACE TEMP TABLE text_candidates AS
WITH pf AS (
    SELECT f.row_id, f.hash
    FROM text_fingerprints f
    SEMI JOIN (SELECT DISTINCT hash FROM text_rare_fps) h ON h.hash = f.hash
)
SELECT DISTINCT r.row_id AS response_row_id, s.row_id AS source_row_id
FROM text_rare_fps r
JOIN pf ON pf.hash = r.hash
JOIN requests s ON s.row_id = pf.row_id
WHERE s.model = r.model
  AND s.tenant_id <> r.tenant_id
  AND s.ts < r.ts
  AND (s.status IS NULL OR s.status BETWEEN 200 AND 299);
