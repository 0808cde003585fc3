-- Report tenant exposure map: each recipient tenant with each source tenant, the strongest tier and the number of exposures.
-- An unattributed request (tenant_id '': no gateway record names its
-- tenant) is drawn as '(unattributed)'.
SELECT coalesce(nullif(recipient_tenant_id, ''), '(unattributed)') AS recipient_tenant_id,
       coalesce(nullif(source_tenant_id, ''), '(unattributed)') AS source_tenant_id,
       arg_min(tier, tier_rank) AS tier, min(tier_rank) AS tier_rank,
       count(*) AS exposures, bool_or(self_exposure) AS self_exposure
FROM exposures
GROUP BY ALL
ORDER BY recipient_tenant_id, tier_rank, source_tenant_id;
