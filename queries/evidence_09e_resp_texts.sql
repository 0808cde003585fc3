-- evidence: the logged responses to compare with row_id in [$1, $2), streamed to Go to be fingerprinted (the text never leaves the hashing; the range filters both sides, as in evidence_09).
-- args: 0, 100
SELECT r.row_id, r.response_text
FROM requests r
SEMI JOIN (SELECT row_id FROM text_responses WHERE row_id >= $1 AND row_id < $2) t ON t.row_id = r.row_id
WHERE r.row_id >= $1 AND r.row_id < $2
  AND r.response_text IS NOT NULL;
