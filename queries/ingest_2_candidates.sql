-- Rows that may be duplicates or conflicts of the file being loaded: every row of the case with a hash found by ingest_1_shared (skipped when it found none).
INSERT INTO ingest_cand
SELECT rowid AS rid, * FROM requests WHERE hash(request_id) IN (SELECT h FROM ingest_shared);
