-- notify: each tenant's own requests for its notice attachment: affected (its triggers) and exposed (its cross-tenant sources), with the strongest tier.
WITH affected AS (
    SELECT a.tenant_id, a.request_id, min(a.ts) AS ts, min(e.tier_rank) AS rank
    FROM affected_requests a
    LEFT JOIN exposures e ON e.trigger_row_id = a.row_id
    GROUP BY a.tenant_id, a.request_id
), exposed AS (
    SELECT source_tenant_id AS tenant_id, source_request_id AS request_id,
           min(source_ts) AS ts, min(tier_rank) AS rank
    FROM exposures WHERE NOT self_exposure
    GROUP BY source_tenant_id, source_request_id
), u AS (
    SELECT tenant_id, 'affected' AS role, request_id, ts, rank FROM affected
    UNION ALL
    SELECT tenant_id, 'exposed' AS role, request_id, ts, rank FROM exposed
)
SELECT tenant_id, role, request_id, rfc3339(ts) AS ts,
       coalesce(CASE rank WHEN 1 THEN 'confirmed' WHEN 2 THEN 'probable' WHEN 3 THEN 'possible' END, 'none') AS tier
FROM u
ORDER BY tenant_id, role, u.ts, request_id;
