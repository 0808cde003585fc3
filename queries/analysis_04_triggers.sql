-- analysis: the triggers: in scope (model, [start,end)), served (2xx or no status), prompt_tokens > the prefill pool in force.
-- The threshold is the latest capacity row of the request's prefill instance
-- with valid_from <= ts (ASOF); an unknown or unlisted instance, or a time
-- before its first row, takes the incident's default.
CREATE OR REPLACE TEMP TABLE analysis_triggers AS
WITH cand AS (
    SELECT r.row_id, r.request_id, r.tenant_id, r.ts, r.end_ts, r.model, r.prompt_tokens,
           r.completion_tokens, r.prefill_instance, r.decode_instance,
           p.prefill_pool AS default_pool
    FROM requests r, analysis_params p
    WHERE r.prompt_tokens > (SELECT least(p.prefill_pool, coalesce(min(c.pool_tokens), p.prefill_pool))
                             FROM analysis_capacity c WHERE c.role = 'prefill') -- no pool is smaller: skip the rest early
      AND list_contains(p.models, r.model)
      AND r.ts >= p.window_start AND r.ts < p.window_end
      AND (r.status IS NULL OR r.status BETWEEN 200 AND 299)
), prefill AS (
    SELECT instance, valid_from, pool_tokens FROM analysis_capacity WHERE role = 'prefill'
), thresholded AS (
    SELECT c.* EXCLUDE (default_pool), coalesce(cap.pool_tokens, c.default_pool) AS capacity_tokens
    FROM cand c ASOF LEFT JOIN prefill cap
      ON cap.instance = c.prefill_instance AND c.ts >= cap.valid_from
)
SELECT * FROM thresholded WHERE prompt_tokens > capacity_tokens;
