-- Report rejected rows: file, line and reason only (the raw text never leaves the case database), in file and line order.
SELECT r.file_id, coalesce(f.path, '') AS path, r.line, r.reason
FROM rejected_rows r LEFT JOIN ingest_files f USING (file_id)
ORDER BY r.file_id, r.line, r.reason;
