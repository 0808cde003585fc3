-- evidence: the logged texts of the candidate pairs of responses with row_id in [$1, $2), streamed to Go to measure each match (responses with their own prompt and model; sources' prompts), from text_pair_texts.
-- args: 0, 100
WITH c AS (
    SELECT response_row_id, source_row_id FROM text_candidates
    WHERE response_row_id >= $1 AND response_row_id < $2
)
SELECT r.row_id,
       r.prompt_text,
       CASE WHEN r.row_id IN (SELECT response_row_id FROM c) THEN r.response_text END AS response_text,
       r.model
FROM text_pair_texts r
WHERE r.row_id IN (SELECT response_row_id FROM c)
   OR r.row_id IN (SELECT source_row_id FROM c);
