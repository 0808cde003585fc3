-- Rows loaded from file $1 whose request_id another loaded row of the case also has, with other values (a conflict: both kept); a count per request_id, so many rows of one id stay linear.
-- args: 99
SELECT count(*)
FROM (
    SELECT file_id, count(*) OVER (PARTITION BY request_id) AS same_id
    FROM ingest_cand
    WHERE rid NOT IN (SELECT rid FROM ingest_dups)
)
WHERE file_id = $1 AND same_id > 1;
