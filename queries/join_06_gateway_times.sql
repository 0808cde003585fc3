-- join: gateway-engine candidates where no id is shared: same model, equal prompt and completion sizes, start times at most gateway_us apart.
-- A lone prefill record has no completion size of the call (the decode
-- side writes the answer): its prompt size must agree.
CREATE OR REPLACE TEMP TABLE join_gtime AS
WITH g AS (
    SELECT r.record_id AS g_id, r.model, r.ts, r.prompt_tokens, r.completion_tokens
    FROM join_rec r
    WHERE r.role = 'gateway' AND r.dup_of IS NULL
      AND NOT EXISTS (SELECT 1 FROM join_gid i WHERE i.g_id = r.record_id)
), u AS (
    SELECT * FROM join_units x WHERE NOT EXISTS (SELECT 1 FROM join_gid i WHERE i.u_id = x.u_id)
)
SELECT g.g_id, u.u_id, abs(epoch_us(g.ts) - epoch_us(u.u_ts)) AS diff_us
FROM g JOIN u ON u.u_model = g.model AND u.u_prompt = g.prompt_tokens
WHERE abs(epoch_us(g.ts) - epoch_us(u.u_ts)) <= (SELECT gateway_us FROM join_params)
  AND (u.d_id IS NULL OR u.u_completion = g.completion_tokens);
