-- A new file_id for the chain of custody.
SELECT nextval('ingest_file_seq');
