-- notify: each tenant's own requests for its notice attachment: affected (its triggers) and exposed (its cross-tenant sources), with the strongest cross-tenant tier (self-exposure never raises it) and whether its own earlier requests matched too, in order into a temp table read back in pieces (notify_request_rows_2_piece).
CREATE OR REPLACE TEMP TABLE notify_request_rows AS
WITH affected AS (
    SELECT a.tenant_id, a.request_id, min(a.ts) AS ts,
           min(e.tier_rank) FILTER (WHERE NOT e.self_exposure) AS rank,
           coalesce(bool_or(e.self_exposure), false) AS own,
           -- never-written slots (> 0) or a trigger the replay could not place (NULL)
           bool_or(a.unknown_slots IS NULL OR a.unknown_slots > 0) AS unknown
    FROM affected_requests a
    LEFT JOIN exposures e ON e.trigger_row_id = a.row_id
    GROUP BY a.tenant_id, a.request_id
), exposed AS (
    SELECT source_tenant_id AS tenant_id, source_request_id AS request_id,
           min(source_ts) AS ts, min(tier_rank) AS rank, NULL::BOOLEAN AS own, false AS unknown
    FROM exposures WHERE NOT self_exposure
    GROUP BY source_tenant_id, source_request_id
), u AS (
    SELECT tenant_id, 'affected' AS role, request_id, ts, rank, own, unknown FROM affected
    UNION ALL
    SELECT tenant_id, 'exposed' AS role, request_id, ts, rank, own, unknown FROM exposed
)
SELECT tenant_id, role, request_id, rfc3339(ts) AS ts,
       CASE rank WHEN 1 THEN 'confirmed' WHEN 2 THEN 'probable' WHEN 3 THEN 'possible'
                 ELSE CASE WHEN unknown THEN 'unknown' ELSE 'none' END END AS tier,
       own
FROM u
ORDER BY tenant_id, role, u.ts, request_id;
