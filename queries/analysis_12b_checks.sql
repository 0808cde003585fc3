-- analysis: write the calls either trigger test flags, with the evidence and why the two tests disagree.
-- A call over capacity is a disagreement only when it has a prefill record
-- that could have shown the cut (a canonical row, or a lost prefill record,
-- has none: no fingerprint to look for).
INSERT INTO trigger_checks
SELECT c.row_id, c.request_id, c.ts, c.in_scope, c.over_capacity, c.cut_at_prefill, c.prompt_tokens, c.capacity_tokens,
       concat_ws(' ', CASE WHEN c.over_capacity THEN 'over_capacity' END,
                      CASE WHEN c.cut_at_prefill THEN 'cut_at_prefill' END),
       CASE WHEN c.cut_at_prefill AND NOT c.in_scope
                THEN 'cut at prefill outside the scope ('
                     || CASE WHEN c.model_in_scope THEN 'outside the window' ELSE 'model not listed' END
                     || '): no trigger; the window or the model list may be wrong'
            WHEN c.cut_at_prefill AND NOT c.over_capacity
                THEN 'cut at prefill within the capacity in force (' || c.prompt_tokens || ' <= ' || c.capacity_tokens
                     || ' tokens): a trigger; the capacity timeline may be wrong'
            WHEN c.over_capacity AND NOT c.cut_at_prefill
                 AND c.row_id IN (SELECT row_id FROM request_sources WHERE role = 'prefill')
                THEN 'over capacity, but its prefill record did not cut the prompt'
       END
FROM analysis_checks c
ORDER BY c.ts, c.request_id, c.row_id;
