-- Fast path: number the rows of file $1 by position in the insertion order, which is file order: line = rowid - $2 + 1 ($2: the file's first rowid), row_id = file_id << 32 | line; ingest_fast_shift then accounts for blank lines.
-- args: 99, 0
UPDATE requests
SET line = rowid - $2 + 1,
    row_id = ($1::BIGINT << 32) + (rowid - $2 + 1)
WHERE file_id = $1;
