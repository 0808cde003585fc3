-- evidence: row_id bounds cutting the fingerprinted rows (text_indexed) into ranges of about $1 rows, whose prompts are read again a range at a time.
-- args: 100000
SELECT row_id FROM (
    SELECT row_id, row_number() OVER (ORDER BY row_id) - 1 AS n FROM text_indexed
) WHERE n % $1 = 0
ORDER BY row_id;
