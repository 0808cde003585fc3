-- Fill ingest_case_ids from every row of requests but those of file $1 (the file being loaded, added by ingest_case_ids_add once its duplicates are dropped): once per ingest command, in the file's transaction.
-- args: 99
INSERT INTO ingest_case_ids SELECT hash(request_id), file_id FROM requests WHERE file_id <> $1;
