-- Report prompt-length series of the in-scope models ($1): every trigger, and all other requests or, above $2 points, a 1-in-N hash sample of about $2 of them plus the shortest and longest in each of $3 time slices.
-- args: ['glm-5.3'], 1000, 500
-- scope and others are materialized: each is read several times below.
WITH scope AS MATERIALIZED (
    SELECT r.row_id, r.ts, r.prompt_tokens, a.row_id IS NOT NULL AS is_trigger
    FROM requests r LEFT JOIN affected_requests a ON a.row_id = r.row_id
    WHERE list_contains(CAST($1 AS VARCHAR[]), r.model)
), n AS (
    SELECT count(*) AS total, min(epoch_us(ts)) AS lo, max(epoch_us(ts)) AS hi,
           greatest(1, count(*) // $2) AS stride
    FROM scope
), others AS MATERIALIZED (
    SELECT s.*, CAST(floor((epoch_us(s.ts) - n.lo) * CAST($3 AS DOUBLE) / greatest(n.hi - n.lo + 1, 1)) AS BIGINT) AS slice
    FROM scope s, n
    WHERE NOT s.is_trigger
), extremes AS (
    -- (prompt_tokens, row_id) is unique, so the kept rows do not depend on scan order.
    SELECT min((prompt_tokens, row_id)) AS lo_key, max((prompt_tokens, row_id)) AS hi_key
    FROM others GROUP BY slice
), kept AS (
    SELECT row_id FROM scope WHERE is_trigger
    UNION
    SELECT row_id FROM others, n WHERE n.total <= $2
    UNION
    -- The sample shows where most requests lie; the extremes keep the envelope.
    -- hash() is a UBIGINT: modulo a BIGINT stride would be done in HUGEINT,
    -- five times the whole query's cost at 10M requests.
    SELECT row_id FROM others, n WHERE n.total > $2 AND hash(row_id) % CAST(n.stride AS UBIGINT) = 0
    UNION
    SELECT k.lo_key[2] FROM extremes k, n WHERE n.total > $2
    UNION
    SELECT k.hi_key[2] FROM extremes k, n WHERE n.total > $2
)
SELECT s.ts, s.prompt_tokens, s.is_trigger, n.total
FROM scope s JOIN kept USING (row_id), n
ORDER BY s.ts, s.row_id;
