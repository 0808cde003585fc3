-- ingest_1_shared through ingest_case_ids (every other row of the case, as hashes): the request_id hashes of file $1's rows that another row of the case or of the file also has; the file's own rows are hashed, the case's are read as integers.
-- args: 99
INSERT INTO ingest_shared
WITH mine AS MATERIALIZED (
    SELECT hash(request_id) AS h FROM requests WHERE file_id = $1
)
SELECT h
FROM (
    SELECT h FROM mine
    UNION ALL
    SELECT h FROM ingest_case_ids WHERE h IN (SELECT h FROM mine)
)
GROUP BY h HAVING count(*) > 1;
