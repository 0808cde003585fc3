-- join: gateway-engine candidates where no id is shared: same model, start times at most gateway_us apart, and equal prompt and completion sizes, or (a failure the gateway logged without sizes) an engine side that aborted with the same status.
-- A lone prefill record has no completion size of the call (the decode
-- side writes the answer): its prompt size must agree. A failed call's
-- gateway row often has no sizes (LiteLLM and Cloudflare log 0 tokens for
-- an error) and, for LiteLLM, its own id rather than the engine's rid: its
-- evidence is the model, the time, and an engine record that aborted (the
-- decode's, else the lone prefill's) with the status the customer got
-- (when the engine gives one). kind says which rule made the candidate.
CREATE OR REPLACE TEMP TABLE join_gtime AS
WITH g AS (
    SELECT r.record_id AS g_id, r.model, r.ts, r.prompt_tokens, r.completion_tokens, r.status,
           coalesce(r.prompt_tokens, 0) = 0 AND coalesce(r.completion_tokens, 0) = 0
               AND r.status IS NOT NULL AND r.status NOT BETWEEN 200 AND 299 AS failed_unsized
    FROM join_rec r
    WHERE r.role = 'gateway' AND r.dup_of IS NULL
      AND NOT EXISTS (SELECT 1 FROM join_gid i WHERE i.g_id = r.record_id)
), u AS (
    SELECT x.*, e.finish_type AS e_finish, e.status AS e_status
    FROM join_units x
    LEFT JOIN (SELECT * FROM join_rec WHERE role <> 'gateway') e ON e.record_id = coalesce(x.d_id, x.p_id)
    WHERE NOT EXISTS (SELECT 1 FROM join_gid i WHERE i.u_id = x.u_id)
)
SELECT g.g_id, u.u_id, abs(epoch_us(g.ts) - epoch_us(u.u_ts)) AS diff_us,
       CASE WHEN g.failed_unsized AND u.e_finish = 'abort' THEN 'failure' ELSE 'sizes' END AS kind
FROM g JOIN u ON u.u_model = g.model
WHERE abs(epoch_us(g.ts) - epoch_us(u.u_ts)) <= (SELECT gateway_us FROM join_params)
  AND ((u.u_prompt = g.prompt_tokens AND (u.d_id IS NULL OR u.u_completion = g.completion_tokens))
       OR (g.failed_unsized AND u.e_finish = 'abort' AND (u.e_status IS NULL OR u.e_status = g.status)));
