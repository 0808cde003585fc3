-- join: the engine side of each call: a prefill-decode pair whose room names no other candidate, else each engine record alone.
-- An ambiguous pair (a record with two candidates within the tolerance) is
-- never guessed: each of its records stands alone. An engine-role record
-- (prefill and decode in one server) is its own decode side. The size the
-- gateway match compares: the decode's, else the prefill's (for a cut
-- prompt, the length its abort message gives).
CREATE OR REPLACE TEMP TABLE join_units AS
WITH n AS (
    SELECT p_id, d_id, count(*) OVER (PARTITION BY p_id) AS pn, count(*) OVER (PARTITION BY d_id) AS dn
    FROM join_pd
), pairs AS (
    SELECT p_id, d_id FROM n WHERE pn = 1 AND dn = 1
), units AS (
    SELECT p_id, d_id FROM pairs
    UNION ALL
    SELECT NULL, r.record_id FROM join_rec r
    WHERE r.role IN ('decode', 'engine') AND r.dup_of IS NULL
      AND NOT EXISTS (SELECT 1 FROM pairs x WHERE x.d_id = r.record_id)
    UNION ALL
    SELECT r.record_id, NULL FROM join_rec r
    WHERE r.role = 'prefill' AND r.dup_of IS NULL
      AND NOT EXISTS (SELECT 1 FROM pairs x WHERE x.p_id = r.record_id)
)
SELECT coalesce(u.d_id, u.p_id) AS u_id, u.p_id, u.d_id,
       d.rid AS d_rid, p.rid AS p_rid,
       coalesce(d.ts, p.ts) AS u_ts,
       coalesce(d.model, p.model) AS u_model,
       -- a prefill record that cut the prompt still says how long it was
       coalesce(d.prompt_tokens,
                TRY_CAST(regexp_extract(p.finish_message, 'Input length \((\d+) tokens\)', 1) AS BIGINT),
                p.prompt_tokens) AS u_prompt,
       d.completion_tokens AS u_completion
FROM units u
LEFT JOIN (SELECT * FROM join_rec WHERE role IN ('decode', 'engine')) d ON d.record_id = u.d_id
LEFT JOIN (SELECT * FROM join_rec WHERE role = 'prefill') p ON p.record_id = u.p_id;
