-- Record a loaded input file and its counts in the chain of custody (same transaction as its rows).
-- args: 99, 'logs/x.jsonl', 'x.jsonl', 0, 'ff00', 'empty', 'none', 'canonical', 0, 0, 0, 0, false
INSERT INTO ingest_files (file_id, path, name, size_bytes, sha256, format, compression, preset,
                          rows_read, rows_loaded, rows_rejected, rows_duplicate, name_reused, loaded_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, current_timestamp);
