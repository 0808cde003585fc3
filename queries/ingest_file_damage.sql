-- The damage a file (by SHA-256 $1) had when it was loaded: its rejected row for the break of its compressed stream (a truncated .gz), its torn last line or its cut JSON document, if any (ingest/torn.go).
-- args: 'abc'
SELECT min(r.reason)
FROM rejected_rows AS r
JOIN ingest_files AS f USING (file_id)
WHERE f.sha256 = $1
  AND (r.reason LIKE 'truncated % stream' OR r.reason LIKE 'damaged % stream (%'
       OR r.reason LIKE 'torn last line (%' OR r.reason LIKE 'truncated JSON document (%')
HAVING count(*) > 0;
