-- Duplicate source records found by ingest_records_1_dups, per file.
SELECT file_id, count(*) FROM ingest_record_dups GROUP BY file_id ORDER BY file_id;
