-- evidence: row_id bounds cutting the responses to compare (text_responses, each once) into ranges of about $1 rows, hashed a range at a time.
-- args: 100000
SELECT row_id FROM (
    SELECT row_id, row_number() OVER (ORDER BY row_id) - 1 AS n FROM (SELECT DISTINCT row_id FROM text_responses)
) WHERE n % $1 = 0
ORDER BY row_id;
