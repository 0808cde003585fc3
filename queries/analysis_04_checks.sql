-- analysis: the two trigger tests on every served call they flag: over capacity (in scope: model, [start,end), prompt_tokens > the prefill pool in force), and cut at prefill (the joined call's fingerprint, any scope).
-- The threshold is the latest capacity row of the request's prefill instance
-- with valid_from <= ts (ASOF); an unknown or unlisted instance, or a time
-- before its first row, takes the incident's default. A cut call outside
-- the scope is kept here (no trigger, but a sign that the window or the
-- model list is wrong).
CREATE OR REPLACE TEMP TABLE analysis_checks AS
WITH cut AS (
    SELECT row_id FROM joined_requests WHERE cut_at_prefill
), cand AS (
    SELECT r.row_id, r.request_id, r.tenant_id, r.ts, r.end_ts, r.model, r.prompt_tokens,
           r.completion_tokens, r.prefill_instance, r.decode_instance,
           p.prefill_pool AS default_pool,
           (list_contains(p.models, r.model) AND r.ts >= p.window_start AND r.ts < p.window_end) AS in_scope,
           list_contains(p.models, r.model) AS model_in_scope,
           r.row_id IN (SELECT row_id FROM cut) AS cut_at_prefill
    FROM requests r, analysis_params p
    WHERE (r.status IS NULL OR r.status BETWEEN 200 AND 299)
      -- no pool is smaller: skip the rest early. The subquery must not
      -- name p: a correlated one makes DuckDB copy every request's columns
      -- for a delim join (30M rows: 61 s and gigabytes, most of the step).
      AND ((r.prompt_tokens > least(p.prefill_pool, coalesce((SELECT min(c.pool_tokens)
                               FROM analysis_capacity c WHERE c.role = 'prefill'), p.prefill_pool))
            AND list_contains(p.models, r.model)
            AND r.ts >= p.window_start AND r.ts < p.window_end)
           OR r.row_id IN (SELECT row_id FROM cut))
), prefill AS (
    SELECT instance, valid_from, pool_tokens FROM analysis_capacity WHERE role = 'prefill'
), thresholded AS (
    SELECT c.* EXCLUDE (default_pool), coalesce(cap.pool_tokens, c.default_pool) AS capacity_tokens
    FROM cand c ASOF LEFT JOIN prefill cap
      ON cap.instance = c.prefill_instance AND c.ts >= cap.valid_from
)
SELECT *, in_scope AND prompt_tokens > capacity_tokens AS over_capacity
FROM thresholded
WHERE (in_scope AND prompt_tokens > capacity_tokens) OR cut_at_prefill;
