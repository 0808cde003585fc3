-- evidence: the candidate (response, source) pairs of responses with row_id in [$1, $2), in a fixed order.
-- args: 0, 100
SELECT response_row_id, source_row_id FROM text_candidates
WHERE response_row_id >= $1 AND response_row_id < $2
ORDER BY response_row_id, source_row_id;
