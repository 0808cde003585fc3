-- filing: the figures the regulator notice and the Regulator sheet both state: tenants and requests on each side of the leak, exposures by tier (self-exposure apart), first and last affected request, analysis runs, when the regulator notice was accepted.
WITH cross_exp AS (
    SELECT * FROM exposures WHERE NOT self_exposure
), recv AS (
    -- responses that may hold another tenant's data: a cross-tenant source,
    -- or slots whose owner is unknown (unknown_slots > 0, or NULL: not placed)
    SELECT DISTINCT a.tenant_id, a.request_id
    FROM affected_requests a
    WHERE a.unknown_slots IS NULL OR a.unknown_slots > 0
       OR a.row_id IN (SELECT trigger_row_id FROM cross_exp)
), src AS (
    SELECT DISTINCT source_tenant_id AS tenant_id, source_request_id AS request_id FROM cross_exp
)
-- Tenant counts leave out unattributed requests (tenant_id '': engine
-- records no gateway record claims): no one to count, though their
-- requests still count.
SELECT
    (SELECT count(DISTINCT tenant_id) FILTER (WHERE tenant_id <> '') FROM recv) AS recipient_tenants,
    (SELECT count(DISTINCT tenant_id) FILTER (WHERE tenant_id <> '') FROM src) AS source_tenants,
    (SELECT count(DISTINCT tenant_id) FILTER (WHERE tenant_id <> '') FROM (SELECT tenant_id FROM recv UNION ALL SELECT tenant_id FROM src)) AS tenants_total,
    (SELECT count(*) FROM recv) AS affected_requests,
    (SELECT count(DISTINCT request_id) FROM src) AS exposed_requests,
    (SELECT count(*) FROM cross_exp WHERE tier = 'confirmed') AS confirmed_exposures,
    (SELECT count(*) FROM cross_exp WHERE tier = 'probable') AS probable_exposures,
    (SELECT count(*) FROM cross_exp WHERE tier = 'possible') AS possible_exposures,
    (SELECT count(*) FROM exposures WHERE self_exposure) AS self_exposures,
    (SELECT min(ts) FROM affected_requests) AS first_affected_ts,
    (SELECT max(ts) FROM affected_requests) AS last_affected_ts,
    (SELECT count(*) FROM analysis_runs) AS analysis_runs,
    (SELECT min(s.attempted_at) FROM send_ledger s JOIN notices n USING (notice_id)
      WHERE n.kind = 'regulator' AND s.status = 'accepted') AS regulator_sent_at;
