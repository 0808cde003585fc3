-- Create (or empty) the ingest command's table of every row's request_id hash and file in the case (filled once by ingest_case_ids_fill, kept equal to requests by ingest_case_ids_add): each file then probes narrow integers instead of hashing every request_id of the case.
CREATE OR REPLACE TEMP TABLE ingest_case_ids (h UBIGINT NOT NULL, file_id BIGINT NOT NULL);
