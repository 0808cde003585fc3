-- Fast path: make the row at position $3 (1-based, in file order; $2 is the file's first rowid) of file $1 a placeholder: its line is over --max-line-bytes, or holds enough brackets to nest deeper than the depth bound, and is judged again in Go, as on the checked path.
-- args: 99, 0, 1
UPDATE requests SET row_id = -1 WHERE file_id = $1 AND rowid = $2 + $3 - 1;
