-- Delete the committed rows of file $1, a fast load that did not finish (its ingest_files row was never written).
-- args: 99
DELETE FROM requests WHERE file_id = $1 AND file_id IN (SELECT file_id FROM ingest_pending);
