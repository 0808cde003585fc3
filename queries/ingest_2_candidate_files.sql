-- The files of the case (but the loading one) holding a request_id hash of the loading file (ingest_case_hits): ingest_2_candidates_range reads only their rows.
SELECT DISTINCT file_id FROM ingest_case_hits ORDER BY file_id;
