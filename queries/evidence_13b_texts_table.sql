-- evidence: the logged texts of every candidate pair's rows, read from requests once (responses with their response text; sources' prompts): each chunk reads its own from this table, not from every request again.
CREATE OR REPLACE TEMP TABLE text_pair_texts AS
SELECT r.row_id,
       r.prompt_text,
       CASE WHEN r.row_id IN (SELECT response_row_id FROM text_candidates) THEN r.response_text END AS response_text,
       r.model
FROM requests r
WHERE r.row_id IN (SELECT response_row_id FROM text_candidates)
   OR r.row_id IN (SELECT source_row_id FROM text_candidates);
