-- Create (or empty) the table of request_id hashes the loading file shares with other rows (filled by ingest_1_shared).
CREATE OR REPLACE TEMP TABLE ingest_shared (h UBIGINT NOT NULL);
