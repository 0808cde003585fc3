-- ingest_2_candidates for the rows of files $1..$2 only (a run of the files ingest_2_candidate_files found, or the loading file): rows of one file are stored together, so the other files' row groups are skipped.
-- args: 1, 99
INSERT INTO ingest_cand
SELECT rowid AS rid, * FROM requests
WHERE file_id BETWEEN $1 AND $2 AND hash(request_id) IN (SELECT h FROM ingest_shared);
