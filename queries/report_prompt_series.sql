-- Report prompt-length series of the in-scope models ($1): every trigger, and all other requests or, above $2 points, a 1-in-N hash sample of about $2 of them plus the shortest and longest in each of $3 time slices.
-- args: ['glm-5.3'], 1000, 500
-- The requests are read twice (their count and time span, then the rows)
-- and nothing is materialized: the slices' extremes are picked with their
-- values (arg_min on the unique (prompt_tokens, row_id)), not joined back.
WITH n AS (
    SELECT count(*) AS total, min(epoch_us(ts)) AS lo, max(epoch_us(ts)) AS hi,
           greatest(1, count(*) // $2) AS stride
    FROM requests WHERE list_contains(CAST($1 AS VARCHAR[]), model)
), scope AS (
    SELECT r.row_id, r.ts, r.prompt_tokens, a.row_id IS NOT NULL AS is_trigger
    FROM requests r LEFT JOIN affected_requests a ON a.row_id = r.row_id
    WHERE list_contains(CAST($1 AS VARCHAR[]), r.model)
), extremes AS (
    -- (prompt_tokens, row_id) is unique, so the kept rows do not depend on scan order.
    SELECT arg_min((s.ts, s.prompt_tokens, s.row_id), (s.prompt_tokens, s.row_id)) AS lo,
           arg_max((s.ts, s.prompt_tokens, s.row_id), (s.prompt_tokens, s.row_id)) AS hi
    FROM scope s, n
    WHERE NOT s.is_trigger AND n.total > $2
    GROUP BY CAST(floor((epoch_us(s.ts) - n.lo) * CAST($3 AS DOUBLE) / greatest(n.hi - n.lo + 1, 1)) AS BIGINT)
), kept AS (
    -- Every trigger; every request up to $2 of them, else a hash sample,
    -- which shows where most requests lie, and the extremes, which keep the
    -- envelope. hash() is a UBIGINT: modulo a BIGINT stride would be done in
    -- HUGEINT, five times the whole query's cost at 10M requests.
    SELECT s.ts, s.prompt_tokens, s.is_trigger, s.row_id FROM scope s, n
    WHERE s.is_trigger OR n.total <= $2 OR hash(s.row_id) % CAST(n.stride AS UBIGINT) = 0
    UNION
    SELECT lo[1], lo[2], false, lo[3] FROM extremes
    UNION
    SELECT hi[1], hi[2], false, hi[3] FROM extremes
)
SELECT k.ts, k.prompt_tokens, k.is_trigger, n.total
FROM kept k, n
ORDER BY k.ts, k.row_id;
