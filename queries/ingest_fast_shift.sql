-- Fast path: move the lines (numbered by position) of file $1's rows past the blank lines before them, per ingest_shift.
-- args: 99
UPDATE requests
SET line = requests.line + s.shift,
    row_id = requests.row_id + s.shift
FROM ingest_shift AS s
WHERE requests.file_id = $1 AND requests.line BETWEEN s.lo AND s.hi;
