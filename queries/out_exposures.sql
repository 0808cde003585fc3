-- exposures.csv: one row per (source, trigger) pair, sorted by trigger ts, trigger id, source id.
SELECT source_request_id, trigger_request_id, source_tenant_id, recipient_tenant_id, tier,
       CASE WHEN self_exposure THEN 'true' ELSE 'false' END AS self_exposure,
       evidence
FROM exposures
ORDER BY trigger_ts, trigger_request_id, source_request_id, trigger_row_id, source_row_id;
