-- Create (or empty) the table of sampled lines and the request_id Go read on each (filled by an appender, checked by ingest_fast_sample_mismatch).
CREATE OR REPLACE TEMP TABLE ingest_sample (line BIGINT NOT NULL, request_id VARCHAR NOT NULL);
