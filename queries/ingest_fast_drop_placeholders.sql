-- Fast path: delete file $1's placeholder rows (their lines are read again in Go).
-- args: 99
DELETE FROM requests WHERE file_id = $1 AND row_id = -1;
