-- notify: every tenant of the tenants table with its notice roles and figures, derived from the exposures (sorted by tenant_id).
WITH recv AS (
    SELECT recipient_tenant_id AS tenant_id,
           min(tier_rank) FILTER (WHERE NOT self_exposure) AS cross_rank,
           min(tier_rank) FILTER (WHERE self_exposure)     AS self_rank
    FROM exposures GROUP BY recipient_tenant_id
), src AS (
    SELECT source_tenant_id AS tenant_id, min(tier_rank) AS src_rank,
           count(DISTINCT source_request_id) AS src_requests
    FROM exposures WHERE NOT self_exposure GROUP BY source_tenant_id
), aff AS (
    -- unknown_slots > 0 (never-written slots) or NULL (the replay could not
    -- place the trigger): another tenant's data cannot be ruled out.
    SELECT tenant_id, count(DISTINCT request_id) AS aff_requests,
           bool_or(unknown_slots IS NULL OR unknown_slots > 0) AS aff_unknown,
           min(ts) AS aff_first, max(ts) AS aff_last
    FROM affected_requests GROUP BY tenant_id
)
SELECT t.tenant_id,
       coalesce(aff.aff_requests, 0) AS affected_requests,
       coalesce(src.src_requests, 0) AS exposed_requests,
       (recv.cross_rank IS NOT NULL OR coalesce(aff.aff_unknown, false)) AS recipient,
       (src.src_rank IS NOT NULL) AS source,
       (recv.self_rank IS NOT NULL) AS self_exposed,
       coalesce(CASE least(recv.cross_rank, recv.self_rank) WHEN 1 THEN 'confirmed' WHEN 2 THEN 'probable' WHEN 3 THEN 'possible' END, '') AS recipient_tier,
       coalesce(CASE src.src_rank WHEN 1 THEN 'confirmed' WHEN 2 THEN 'probable' WHEN 3 THEN 'possible' END, '') AS source_tier,
       rfc3339(least(t.first_ts, aff.aff_first)) AS first_ts,
       rfc3339(greatest(t.last_ts, aff.aff_last)) AS last_ts
FROM (SELECT tenant_id, min(first_ts) AS first_ts, max(last_ts) AS last_ts FROM tenants GROUP BY tenant_id) t
LEFT JOIN recv USING (tenant_id)
LEFT JOIN src USING (tenant_id)
LEFT JOIN aff USING (tenant_id)
ORDER BY t.tenant_id;
