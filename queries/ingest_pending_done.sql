-- Fast path: file $1 is recorded in ingest_files (same transaction) or its rows are deleted: no longer loading.
-- args: 99
DELETE FROM ingest_pending WHERE file_id = $1;
