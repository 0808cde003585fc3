-- analysis: every recipient tenant (owns a trigger) and cross-tenant source tenant, with role, strongest tier, counts and first/last times.
-- Self-exposures never make a tenant a source, nor count in its figures.
-- Unattributed requests (tenant_id '': engine records no gateway record
-- claims) are no tenant: never listed; as sources they still count in the
-- recipient's strongest tier (exposures.csv lists them).
-- strongest_tier: the strongest tier of the cross-tenant exposures the tenant
--   is in, as recipient or as source ('' when it has none, e.g. a recipient
--   whose triggers read only its own data or nobody's).
-- affected_requests: its triggers. exposed_requests: its distinct source
--   requests in cross-tenant exposures.
-- first_ts / last_ts: the earliest and latest ts among those requests (its
--   triggers and its cross-tenant exposed source requests).
INSERT INTO tenants
WITH rec AS (
    SELECT tenant_id, count(*) AS n, min(ts) AS first_ts, max(ts) AS last_ts
    FROM affected_requests WHERE tenant_id <> '' GROUP BY tenant_id
), rec_tier AS (
    SELECT recipient_tenant_id AS tenant_id, min(tier_rank) AS tier_rank
    FROM exposures WHERE NOT self_exposure AND recipient_tenant_id <> '' GROUP BY 1
), src AS (
    SELECT source_tenant_id AS tenant_id, count(DISTINCT source_row_id) AS n,
           min(source_ts) AS first_ts, max(source_ts) AS last_ts, min(tier_rank) AS tier_rank
    FROM exposures WHERE NOT self_exposure AND source_tenant_id <> '' GROUP BY 1
), everyone AS (
    SELECT tenant_id FROM rec UNION SELECT tenant_id FROM src
)
SELECT e.tenant_id,
       CASE WHEN rec.tenant_id IS NOT NULL AND src.tenant_id IS NOT NULL THEN 'both'
            WHEN rec.tenant_id IS NOT NULL THEN 'recipient' ELSE 'source' END,
       CASE least(coalesce(rec_tier.tier_rank, 9), coalesce(src.tier_rank, 9))
            WHEN 1 THEN 'confirmed' WHEN 2 THEN 'probable' WHEN 3 THEN 'possible' ELSE '' END,
       coalesce(rec.n, 0),
       coalesce(src.n, 0),
       least(coalesce(rec.first_ts, src.first_ts), coalesce(src.first_ts, rec.first_ts)),
       greatest(coalesce(rec.last_ts, src.last_ts), coalesce(src.last_ts, rec.last_ts))
FROM everyone e
LEFT JOIN rec ON rec.tenant_id = e.tenant_id
LEFT JOIN rec_tier ON rec_tier.tenant_id = e.tenant_id
LEFT JOIN src ON src.tenant_id = e.tenant_id
ORDER BY e.tenant_id;
