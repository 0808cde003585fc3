-- Record a batch's files in the chain of custody, in one statement (same transaction as their records).
INSERT INTO ingest_files (file_id, path, name, size_bytes, sha256, format, compression, preset,
                          rows_read, rows_loaded, rows_rejected, rows_duplicate, name_reused, loaded_at)
SELECT file_id, path, name, size_bytes, sha256, format, compression, preset,
       rows_read, rows_loaded, rows_rejected, rows_duplicate, name_reused, current_timestamp
FROM ingest_batch_files ORDER BY file_id;
