-- The rows of ingest_case_ids (every other row of the case, as a hash and a file) whose request_id hash one of file $1's rows has: the one pass of the search over the case, over narrow integers.
-- args: 99
INSERT INTO ingest_case_hits
SELECT h, file_id FROM ingest_case_ids
WHERE h IN (SELECT hash(request_id) FROM requests WHERE file_id = $1);
