-- Create (or empty) the stage of a batch's custody rows (filled by an appender, many small files at once; moved by ingest_batch_files_1).
CREATE OR REPLACE TEMP TABLE ingest_batch_files (
    file_id BIGINT, path VARCHAR, name VARCHAR, size_bytes BIGINT, sha256 VARCHAR, format VARCHAR, compression VARCHAR,
    preset VARCHAR, rows_read BIGINT, rows_loaded BIGINT, rows_rejected BIGINT, rows_duplicate BIGINT, name_reused BOOLEAN);
