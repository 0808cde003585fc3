-- ingest_1_shared through ingest_case_hits: the request_id hashes of file $1's rows that another row of the case (a hit) or of the file also has; reads the file's rows and the hits only.
-- args: 99
INSERT INTO ingest_shared
SELECT h
FROM (
    SELECT hash(request_id) AS h FROM requests WHERE file_id = $1
    UNION ALL
    SELECT h FROM ingest_case_hits
)
GROUP BY h HAVING count(*) > 1;
