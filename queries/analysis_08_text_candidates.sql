-- analysis: candidate confirmed pairs: a trigger's response and a served prompt before it (replay order; same decode instance or either unknown; any model, any tenant) sharing a fingerprint that can carry weight.
CREATE OR REPLACE TEMP TABLE text_candidates AS
WITH pf AS (
    SELECT f.row_id, f.hash
    FROM text_fingerprints f
    SEMI JOIN (SELECT DISTINCT hash FROM text_rare_fps) h ON h.hash = f.hash
), pairs AS (
    SELECT DISTINCT r.row_id AS response_row_id, pf.row_id AS source_row_id
    FROM text_rare_fps r JOIN pf ON pf.hash = r.hash
)
SELECT p.response_row_id, p.source_row_id
FROM pairs p
JOIN analysis_triggers t ON t.row_id = p.response_row_id
JOIN requests s ON s.row_id = p.source_row_id
WHERE s.row_id <> t.row_id
  AND (s.status IS NULL OR s.status BETWEEN 200 AND 299)
  AND (s.ts < t.ts OR (s.ts = t.ts AND (s.request_id < t.request_id
       OR (s.request_id = t.request_id AND s.row_id < t.row_id))))
  AND (s.decode_instance = t.decode_instance OR s.decode_instance IS NULL OR t.decode_instance IS NULL);
