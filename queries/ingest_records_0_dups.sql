-- Create (or empty) the table of the loading batch's duplicate source records (filled by ingest_records_1_dups).
CREATE OR REPLACE TEMP TABLE ingest_record_dups (record_id BIGINT NOT NULL, file_id BIGINT NOT NULL);
