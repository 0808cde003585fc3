-- Fast path: number the rows of file $1 in insertion order, which is file order (line, and row_id = file_id << 32 | line).
-- args: 99
UPDATE requests
SET line = requests.rowid - b.base + 1,
    row_id = ($1::BIGINT << 32) + (requests.rowid - b.base + 1)
FROM (SELECT min(rowid) AS base FROM requests WHERE file_id = $1) AS b
WHERE requests.file_id = $1;
