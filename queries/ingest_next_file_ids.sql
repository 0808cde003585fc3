-- $1 new file_ids for the chain of custody, in one query.
-- args: 3
SELECT nextval('ingest_file_seq') FROM range($1);
