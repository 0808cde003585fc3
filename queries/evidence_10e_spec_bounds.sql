-- evidence: row_id bounds cutting the requests into ranges of about $1 rows for evidence_10f_spec_piece: the row_id of every $1-th row as stored (requests are stored in row_id order; row_ids are not dense, a file's id is in their high bits), and the least (the row stored first may be deleted).
-- args: 100
SELECT row_id FROM requests WHERE rowid % $1 = 0
UNION
SELECT min(row_id) FROM requests HAVING count(*) > 0
ORDER BY row_id;
