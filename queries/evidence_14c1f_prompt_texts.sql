-- evidence: the logged prompts of the rows with row_id in [$1, $2), of the models of the new shared shingles, streamed to Go to find those shingles in them (the text never leaves the hashing).
-- args: 0, 100
SELECT r.row_id, r.prompt_text
FROM requests r
WHERE r.row_id >= $1 AND r.row_id < $2
  AND r.prompt_text IS NOT NULL
  AND r.model IN (SELECT DISTINCT model FROM text_shared_new);
