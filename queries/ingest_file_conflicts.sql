-- Rows loaded from file $1 whose request_id another loaded row of the case also has, with other values (a conflict: both kept).
-- args: 99
WITH kept AS (
    SELECT * FROM ingest_cand WHERE rid NOT IN (SELECT rid FROM ingest_dups)
)
SELECT count(*)
FROM kept AS n
WHERE n.file_id = $1
  AND EXISTS (SELECT 1 FROM kept AS o WHERE o.request_id = n.request_id AND o.rid <> n.rid);
