-- The reason a file (by SHA-256 $1) was damaged when it was loaded: its rejected row for the break of its compressed stream (a truncated .gz), if any.
-- args: 'abc'
SELECT min(r.reason)
FROM rejected_rows AS r
JOIN ingest_files AS f USING (file_id)
WHERE f.sha256 = $1
  AND (r.reason LIKE 'truncated % stream' OR r.reason LIKE 'damaged % stream (%')
HAVING count(*) > 0;
