-- evidence: row_id bounds cutting the pending rows into chunks of about $1 rows (each chunk: from one bound to the next).
-- args: 100000
SELECT row_id FROM (
    SELECT row_id, row_number() OVER (ORDER BY row_id) - 1 AS n FROM text_pending
) WHERE n % $1 = 0
ORDER BY row_id;
