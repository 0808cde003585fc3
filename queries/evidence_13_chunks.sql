-- evidence: response_row_id bounds cutting the candidate pairs into chunks of about $1 pairs, never inside a response's pairs (each chunk: from one bound to the next).
-- args: 65536
SELECT DISTINCT response_row_id FROM (
    SELECT response_row_id, row_number() OVER (ORDER BY response_row_id, source_row_id) - 1 AS n
    FROM text_candidates
) WHERE n % $1 = 0
ORDER BY response_row_id;
