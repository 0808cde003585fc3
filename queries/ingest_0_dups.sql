-- Create (or empty) the table of the loading file's duplicate rows (filled by ingest_3_duplicates).
CREATE OR REPLACE TEMP TABLE ingest_dups (rid BIGINT NOT NULL);
