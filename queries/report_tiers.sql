-- Report figures per tier: exposures, cross-tenant source requests, and tenants whose strongest tier it is.
WITH tiers(tier, tier_rank) AS (VALUES ('confirmed', 1), ('probable', 2), ('possible', 3)),
cross_src AS (
    SELECT source_tenant_id, min(tier_rank) AS tier_rank
    FROM exposures WHERE NOT self_exposure AND source_tenant_id <> '' GROUP BY source_tenant_id -- '' is no tenant (unattributed)
), recip AS (
    SELECT recipient_tenant_id, min(tier_rank) AS tier_rank
    FROM exposures WHERE NOT self_exposure AND recipient_tenant_id <> '' GROUP BY recipient_tenant_id
)
SELECT t.tier,
       (SELECT count(*) FROM exposures e WHERE e.tier_rank = t.tier_rank) AS exposures,
       (SELECT count(*) FROM exposures e WHERE e.tier_rank = t.tier_rank AND NOT e.self_exposure) AS cross_exposures,
       (SELECT count(*) FROM exposures e WHERE e.tier_rank = t.tier_rank AND e.self_exposure) AS self_exposures,
       (SELECT count(DISTINCT source_row_id) FROM exposures e WHERE e.tier_rank = t.tier_rank AND NOT e.self_exposure) AS source_requests,
       (SELECT count(*) FROM cross_src c WHERE c.tier_rank = t.tier_rank) AS source_tenants,
       (SELECT count(*) FROM recip r WHERE r.tier_rank = t.tier_rank) AS recipient_tenants
FROM tiers t
ORDER BY t.tier_rank;
