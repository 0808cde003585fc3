-- Every file already in the case, by SHA-256 and name: many small files are skipped and flagged with one query.
SELECT sha256, name, path FROM ingest_files ORDER BY file_id;
