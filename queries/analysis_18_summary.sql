-- analysis: the figures of the run's summary: triggers, tenants by role, exposures by tier and self/cross, unattributed requests, the two trigger tests.
SELECT
    (SELECT count(*) FROM affected_requests) AS triggers,
    (SELECT count(*) FROM tenants WHERE role IN ('recipient', 'both')) AS recipient_tenants,
    (SELECT count(*) FROM tenants WHERE role IN ('source', 'both')) AS source_tenants,
    (SELECT count(*) FROM exposures WHERE tier = 'confirmed') AS confirmed,
    (SELECT count(*) FROM exposures WHERE tier = 'probable') AS probable,
    (SELECT count(*) FROM exposures WHERE tier = 'possible') AS possible,
    (SELECT count(*) FROM exposures WHERE NOT self_exposure) AS cross_tenant,
    (SELECT count(*) FROM exposures WHERE self_exposure) AS self_exposures,
    (SELECT count(*) FROM affected_requests WHERE tenant_id = '') AS unattributed_triggers,
    (SELECT count(DISTINCT source_row_id) FROM exposures WHERE source_tenant_id = '') AS unattributed_sources,
    (SELECT count(*) FROM trigger_checks WHERE in_scope AND cut_at_prefill) AS cut_triggers,
    (SELECT count(*) FROM trigger_checks WHERE disagreement IS NOT NULL) AS disagreements;
