-- Add file $1's rows, its duplicates dropped, to ingest_case_ids, in the transaction that records the file: the table stays the request_id hashes of the case's rows.
-- args: 99
INSERT INTO ingest_case_ids SELECT hash(request_id), file_id FROM requests WHERE file_id = $1;
