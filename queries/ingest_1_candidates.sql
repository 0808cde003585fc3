-- Rows that may be duplicates or conflicts of file $1's rows: every row of the case whose request_id hash is shared with a row of file $1 (a duplicate has the same request_id). One aggregation over a narrow hash column; values are compared later on these few rows only.
-- args: 99
INSERT INTO ingest_cand
WITH mine AS MATERIALIZED (
    SELECT DISTINCT hash(request_id) AS h FROM requests WHERE file_id = $1
), shared AS MATERIALIZED (
    SELECT hash(request_id) AS h FROM requests
    WHERE hash(request_id) IN (SELECT h FROM mine)
    GROUP BY 1 HAVING count(*) > 1
)
SELECT rowid AS rid, * FROM requests WHERE hash(request_id) IN (SELECT h FROM shared);
