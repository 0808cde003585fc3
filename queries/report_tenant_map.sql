-- Report tenant exposure map: each recipient tenant with each source tenant, the strongest tier and the number of exposures.
SELECT recipient_tenant_id, source_tenant_id,
       arg_min(tier, tier_rank) AS tier, min(tier_rank) AS tier_rank,
       count(*) AS exposures, bool_or(self_exposure) AS self_exposure
FROM exposures
GROUP BY recipient_tenant_id, source_tenant_id
ORDER BY recipient_tenant_id, tier_rank, source_tenant_id;
