-- Fast path, after the rows are committed: rows of file $1 and their first and last rowid (one insert in file order, nothing deleted yet, gives count = last - first + 1).
-- args: 1
SELECT count(*), coalesce(min(rowid), 0), coalesce(max(rowid), -1)
FROM requests WHERE file_id = $1;
