-- The first file of the case with SHA-256 $1 (already loaded: skip it whole).
-- args: 'aa11'
SELECT file_id, path FROM ingest_files WHERE sha256 = $1 ORDER BY file_id LIMIT 1;
