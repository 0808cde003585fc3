-- ingest_1_candidates for a file that is most of the case: one aggregation over the whole table is cheaper than a lookup per row.
-- args: 99
INSERT INTO ingest_cand
WITH shared AS MATERIALIZED (
    SELECT hash(request_id) AS h FROM requests
    GROUP BY 1 HAVING count(*) > 1 AND bool_or(file_id = $1)
)
SELECT rowid AS rid, * FROM requests WHERE hash(request_id) IN (SELECT h FROM shared);
