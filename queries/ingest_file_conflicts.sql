-- Rows loaded from file $1 whose request_id another row of the case also has, with other values (a conflict).
-- args: 1
SELECT count(*)
FROM requests AS n
WHERE n.file_id = $1
  AND EXISTS (SELECT 1 FROM requests AS o WHERE o.request_id = n.request_id AND o.row_id <> n.row_id);
