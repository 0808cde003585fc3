-- Drop the duplicate source records found by ingest_records_1_dups.
DELETE FROM source_records WHERE record_id IN (SELECT record_id FROM ingest_record_dups);
