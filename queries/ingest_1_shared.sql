-- The request_id hashes of file $1's rows that another row of the case (or of the file) also has: one aggregation over a narrow hash column; a duplicate or a conflict has one of them. Values are compared later on these few rows only.
-- args: 99
INSERT INTO ingest_shared
WITH mine AS MATERIALIZED (
    SELECT DISTINCT hash(request_id) AS h FROM requests WHERE file_id = $1
)
SELECT hash(request_id) AS h FROM requests
WHERE hash(request_id) IN (SELECT h FROM mine)
GROUP BY 1 HAVING count(*) > 1;
