-- Fast path: the positions (1-based, in file order; $2 is the file's first rowid) of file $1's placeholder rows, lines the reader could not judge.
-- args: 99, 0
SELECT rowid - $2 + 1 FROM requests WHERE file_id = $1 AND row_id = -1 ORDER BY 1;
