-- The files of the case (but the loading one) holding a request_id hash found by ingest_1_shared_case: ingest_2_candidates_range reads only their rows.
SELECT DISTINCT file_id FROM ingest_case_ids WHERE h IN (SELECT h FROM ingest_shared) ORDER BY file_id;
