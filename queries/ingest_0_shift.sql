-- Create (or empty) the table of position ranges and how far blank lines shift them (filled by ingest_shift_add, used by ingest_fast_shift).
CREATE OR REPLACE TEMP TABLE ingest_shift (lo BIGINT NOT NULL, hi BIGINT NOT NULL, shift BIGINT NOT NULL);
