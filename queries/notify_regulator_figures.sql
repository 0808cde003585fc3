-- notify: the regulator notice's figures: tenants and requests on each side of the leak, exposures by tier (self-exposure apart).
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
    coalesce((SELECT rfc3339(min(ts)) FROM affected_requests), '') AS first_affected_ts,
    coalesce((SELECT rfc3339(max(ts)) FROM affected_requests), '') AS last_affected_ts;
