-- ingest_1_shared for a file that is most of the case: one aggregation over the whole table is cheaper than a lookup per row.
-- args: 99
INSERT INTO ingest_shared
SELECT hash(request_id) AS h FROM requests
GROUP BY 1 HAVING count(*) > 1 AND bool_or(file_id = $1);
