-- Rows at positions $1..$2 of the loading file come after $3 blank lines.
-- args: 3, 9, 1
INSERT INTO ingest_shift VALUES ($1, $2, $3);
