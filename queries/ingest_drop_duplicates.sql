-- Drop file $1's duplicate rows found by ingest_3_duplicates (a row equal to an earlier one is loaded once and counted).
-- args: 99
DELETE FROM requests WHERE file_id = $1 AND rowid IN (SELECT rid FROM ingest_dups);
