-- Report tenant exposure map: the $1 recipient and $2 source tenants with the most exposures (kind recipient, source; ties by id), the cells between them (kind cell: strongest tier, exposures), and how many tenants each role has.
-- args: 60, 90
-- An unattributed request (tenant_id '': no gateway record names its
-- tenant) is drawn as '(unattributed)'. The page draws only the top
-- tenants, so only their cells leave the database (a 10M case has 1M
-- pairs), and only theirs are grouped: the top tenants are picked first
-- from the per-tenant counts, a few thousand groups.
WITH recipients AS (
    SELECT coalesce(nullif(recipient_tenant_id, ''), '(unattributed)') AS tenant_id, count(*) AS n
    FROM exposures GROUP BY ALL
), sources AS (
    SELECT coalesce(nullif(source_tenant_id, ''), '(unattributed)') AS tenant_id, count(*) AS n
    FROM exposures GROUP BY ALL
), top_r AS (
    SELECT tenant_id FROM recipients ORDER BY n DESC, tenant_id LIMIT $1
), top_s AS (
    SELECT tenant_id FROM sources ORDER BY n DESC, tenant_id LIMIT $2
), cells AS (
    SELECT coalesce(nullif(recipient_tenant_id, ''), '(unattributed)') AS recipient_tenant_id,
           coalesce(nullif(source_tenant_id, ''), '(unattributed)') AS source_tenant_id,
           arg_min(tier, tier_rank) AS tier, min(tier_rank) AS tier_rank,
           count(*) AS exposures, bool_or(self_exposure) AS self_exposure
    FROM exposures
    WHERE coalesce(nullif(recipient_tenant_id, ''), '(unattributed)') IN (SELECT tenant_id FROM top_r)
      AND coalesce(nullif(source_tenant_id, ''), '(unattributed)') IN (SELECT tenant_id FROM top_s)
    GROUP BY ALL
)
SELECT x.*,
       (SELECT count(*) FROM recipients) AS all_recipients,
       (SELECT count(*) FROM sources) AS all_sources
FROM (
    SELECT 'recipient' AS kind, tenant_id AS recipient_tenant_id, NULL AS source_tenant_id,
           NULL AS tier, NULL AS tier_rank, NULL AS exposures, NULL AS self_exposure
    FROM top_r
    UNION ALL
    SELECT 'source', NULL, tenant_id, NULL, NULL, NULL, NULL FROM top_s
    UNION ALL
    SELECT 'cell', * FROM cells
) x
ORDER BY kind, recipient_tenant_id, tier_rank, source_tenant_id;
