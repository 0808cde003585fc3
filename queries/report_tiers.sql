-- Report figures per tier: exposures, cross-tenant source requests, and tenants whose strongest tier it is.
-- The per-tier counts in one pass over the exposures (was four scans a tier).
WITH tiers(tier, tier_rank) AS (VALUES ('confirmed', 1), ('probable', 2), ('possible', 3)),
per_tier AS (
    SELECT tier_rank, count(*) AS exposures,
           count(*) FILTER (WHERE NOT self_exposure) AS cross_exposures,
           count(*) FILTER (WHERE self_exposure) AS self_exposures,
           count(DISTINCT source_row_id) FILTER (WHERE NOT self_exposure) AS source_requests
    FROM exposures GROUP BY tier_rank
), cross_src AS (
    SELECT source_tenant_id, min(tier_rank) AS tier_rank
    FROM exposures WHERE NOT self_exposure AND source_tenant_id <> '' GROUP BY source_tenant_id -- '' is no tenant (unattributed)
), recip AS (
    SELECT recipient_tenant_id, min(tier_rank) AS tier_rank
    FROM exposures WHERE NOT self_exposure AND recipient_tenant_id <> '' GROUP BY recipient_tenant_id
)
SELECT t.tier,
       coalesce(p.exposures, 0) AS exposures,
       coalesce(p.cross_exposures, 0) AS cross_exposures,
       coalesce(p.self_exposures, 0) AS self_exposures,
       coalesce(p.source_requests, 0) AS source_requests,
       (SELECT count(*) FROM cross_src c WHERE c.tier_rank = t.tier_rank) AS source_tenants,
       (SELECT count(*) FROM recip r WHERE r.tier_rank = t.tier_rank) AS recipient_tenants
FROM tiers t LEFT JOIN per_tier p USING (tier_rank)
ORDER BY t.tier_rank;
