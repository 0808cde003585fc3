-- DuckDB's own hash() of text $1, to check the Go reader's duckHash against the database before its hashes are used.
-- args: 'chatcmpl-0123'
SELECT hash($1::VARCHAR);
