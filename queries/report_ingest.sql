-- Report ingest ledger: every input file with its SHA-256, size and row counts, in load order (loaded_at stays in the database: a wall-clock time would make two reports of the same case differ).
SELECT file_id, path, name, format, compression, preset, size_bytes, sha256,
       rows_read, rows_loaded, rows_rejected, rows_duplicate, name_reused
FROM ingest_files
ORDER BY file_id;
