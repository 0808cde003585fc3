-- filing: the figures the regulator notice and the Regulator sheet both state: tenants and requests on each side of the leak, exposures by tier (self-exposure apart), first and last affected request, analysis runs, when the regulator notice was accepted.
-- Each table is read once or twice, not once a figure: the exposures'
-- counts in one pass, the distinct triggers and sources as small sets.
WITH expo AS (
    SELECT count(*) FILTER (WHERE NOT self_exposure AND tier = 'confirmed') AS confirmed_exposures,
           count(*) FILTER (WHERE NOT self_exposure AND tier = 'probable') AS probable_exposures,
           count(*) FILTER (WHERE NOT self_exposure AND tier = 'possible') AS possible_exposures,
           count(*) FILTER (WHERE self_exposure) AS self_exposures,
           count(DISTINCT source_request_id) FILTER (WHERE NOT self_exposure) AS exposed_requests
    FROM exposures
), cross_triggers AS (
    SELECT DISTINCT trigger_row_id AS row_id FROM exposures WHERE NOT self_exposure
), recv AS (
    -- responses that may hold another tenant's data: a cross-tenant source,
    -- or slots whose owner is unknown (unknown_slots > 0, or NULL: not placed)
    SELECT DISTINCT a.tenant_id, a.request_id
    FROM affected_requests a
    WHERE a.unknown_slots IS NULL OR a.unknown_slots > 0
       OR a.row_id IN (SELECT row_id FROM cross_triggers)
), src AS (
    SELECT DISTINCT source_tenant_id AS tenant_id FROM exposures WHERE NOT self_exposure
)
-- Tenant counts leave out unattributed requests (tenant_id '': engine
-- records no gateway record claims): no one to count, though their
-- requests still count.
SELECT
    (SELECT count(DISTINCT tenant_id) FILTER (WHERE tenant_id <> '') FROM recv) AS recipient_tenants,
    (SELECT count(DISTINCT tenant_id) FILTER (WHERE tenant_id <> '') FROM src) AS source_tenants,
    (SELECT count(DISTINCT tenant_id) FILTER (WHERE tenant_id <> '') FROM (SELECT tenant_id FROM recv UNION ALL SELECT tenant_id FROM src)) AS tenants_total,
    (SELECT count(*) FROM recv) AS affected_requests,
    expo.exposed_requests, expo.confirmed_exposures, expo.probable_exposures, expo.possible_exposures, expo.self_exposures,
    (SELECT min(ts) FROM affected_requests) AS first_affected_ts,
    (SELECT max(ts) FROM affected_requests) AS last_affected_ts,
    (SELECT count(*) FROM analysis_runs) AS analysis_runs,
    (SELECT min(s.attempted_at) FROM send_ledger s JOIN notices n USING (notice_id)
      WHERE n.kind = 'regulator' AND s.status = 'accepted') AS regulator_sent_at
FROM expo;
