-- Create (or empty) the table of rows that may be duplicates or conflicts of the file being loaded (filled by ingest_2_candidates).
CREATE OR REPLACE TEMP TABLE ingest_cand AS SELECT rowid AS rid, * FROM requests LIMIT 0;
