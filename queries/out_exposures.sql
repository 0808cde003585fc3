-- exposures.csv: one row per (source, trigger) pair, sorted by trigger ts, trigger id, source id (analysis_14 inserts them in that order; a scan of one table keeps it).
SELECT source_request_id, trigger_request_id, source_tenant_id, recipient_tenant_id, tier,
       CASE WHEN self_exposure THEN 'true' ELSE 'false' END AS self_exposure,
       evidence
FROM exposures;
