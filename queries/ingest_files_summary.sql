-- The chain of custody: every input file with its SHA-256 and counts, in load order.
SELECT file_id, path, name, size_bytes, sha256, format, compression, preset,
       rows_read, rows_loaded, rows_rejected, rows_duplicate, name_reused, rfc3339(loaded_at) AS loaded_at
FROM ingest_files
ORDER BY file_id;
