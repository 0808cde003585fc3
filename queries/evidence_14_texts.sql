-- evidence: the logged texts of the candidate pairs, streamed to Go to measure each match (responses with their own prompt and model; sources' prompts).
SELECT r.row_id,
       r.prompt_text,
       CASE WHEN r.row_id IN (SELECT response_row_id FROM text_candidates) THEN r.response_text END AS response_text,
       r.model
FROM requests r
WHERE r.row_id IN (SELECT response_row_id FROM text_candidates)
   OR r.row_id IN (SELECT source_row_id FROM text_candidates);
