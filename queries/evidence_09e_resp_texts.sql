-- evidence: the logged responses to compare with row_id in [$1, $2), streamed to Go to be fingerprinted (the text never leaves the hashing).
-- args: 0, 100
SELECT r.row_id, r.response_text
FROM requests r
SEMI JOIN text_responses t ON t.row_id = r.row_id
WHERE r.row_id >= $1 AND r.row_id < $2
  AND r.response_text IS NOT NULL;
