-- evidence: the logged prompts of the pending rows with row_id in [$1, $2), streamed to Go (the text never leaves the hashing).
-- args: 0, 100
SELECT r.row_id, r.row_hash, r.prompt_text
FROM requests r
SEMI JOIN text_pending p ON p.row_id = r.row_id
WHERE r.row_id >= $1 AND r.row_id < $2;
