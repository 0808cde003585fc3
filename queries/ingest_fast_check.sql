-- Fast path: rows of file $1, and the lowest and highest line given (numbering is right when they are 1 and the count).
-- args: 1
SELECT count(*), coalesce(min(line), 0), coalesce(max(line), 0) FROM requests WHERE file_id = $1;
