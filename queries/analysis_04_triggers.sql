-- analysis: the triggers: in scope and served, over capacity or cut at prefill; evidence names the tests that flag it.
CREATE OR REPLACE TEMP TABLE analysis_triggers AS
SELECT row_id, request_id, tenant_id, ts, end_ts, model, prompt_tokens, completion_tokens,
       prefill_instance, decode_instance, capacity_tokens, over_capacity, cut_at_prefill,
       concat_ws(' ', CASE WHEN over_capacity THEN 'over_capacity' END,
                      CASE WHEN cut_at_prefill THEN 'cut_at_prefill' END) AS evidence
FROM analysis_checks
WHERE in_scope;
