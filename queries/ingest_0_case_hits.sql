-- Create (or empty) the table of the rows of ingest_case_ids whose request_id hash the loading file also has (filled by ingest_1_case_hits): few, so the rest of the search never reads the case again.
CREATE OR REPLACE TEMP TABLE ingest_case_hits (h UBIGINT NOT NULL, file_id BIGINT NOT NULL);
