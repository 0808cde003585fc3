-- Fast path: sampled lines of file $1 whose row does not carry the request_id Go read on that line (0 unless rows are out of file order).
-- args: 99
SELECT count(*)
FROM ingest_sample AS s
LEFT JOIN requests AS r ON r.file_id = $1 AND r.line = s.line
WHERE r.request_id IS DISTINCT FROM s.request_id;
