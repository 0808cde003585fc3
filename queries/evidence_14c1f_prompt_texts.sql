-- evidence: the logged prompts of the rows with row_id in [$1, $2), of the models of the new shared shingles ($3, from evidence_14c1c2), streamed to Go to find those shingles in them (the text never leaves the hashing).
-- args: 0, 100, ['glm-5.3']
SELECT r.row_id, r.prompt_text
FROM requests r
WHERE r.row_id >= $1 AND r.row_id < $2
  AND r.prompt_text IS NOT NULL
  AND list_contains($3::VARCHAR[], r.model);
