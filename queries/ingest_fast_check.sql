-- Fast path: rows of file $1, their first and last rowid (one insert in file order gives count = last - first + 1), and whether every line is its rowid plus one constant (numbered in insertion order).
-- args: 1
SELECT count(*), coalesce(min(rowid), 0), coalesce(max(rowid), -1), coalesce(min(line - rowid) = max(line - rowid) AND min(line) = 1, true)
FROM requests WHERE file_id = $1;
