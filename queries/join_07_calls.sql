-- join: one row per call: gateway and engine side joined where the match is unique, else each alone; row_id is the primary record's (gateway, else decode, else prefill).
-- By id: the gateway names one engine side and that side one gateway. By
-- time (sizes, or a failure's status): each is the other's nearest
-- candidate, with no tie at that distance.
CREATE OR REPLACE TEMP TABLE join_calls AS
WITH idn AS (
    SELECT g_id, u_id, count(*) OVER (PARTITION BY g_id) AS gn, count(*) OVER (PARTITION BY u_id) AS un
    FROM join_gid
), tbest AS (
    SELECT g_id, u_id, diff_us, kind,
           min(diff_us) OVER (PARTITION BY g_id) AS gmin, min(diff_us) OVER (PARTITION BY u_id) AS umin
    FROM join_gtime
), tties AS (
    SELECT *, count(*) FILTER (WHERE diff_us = gmin) OVER (PARTITION BY g_id) AS gties,
              count(*) FILTER (WHERE diff_us = umin) OVER (PARTITION BY u_id) AS uties
    FROM tbest
), matched AS (
    SELECT g_id, u_id, 'by shared id' AS how FROM idn WHERE gn = 1 AND un = 1
    UNION ALL
    SELECT g_id, u_id, CASE kind WHEN 'failure' THEN 'by model, time and failure status' ELSE 'by model, time and sizes' END
    FROM tties
    WHERE diff_us = gmin AND diff_us = umin AND gties = 1 AND uties = 1
), calls AS (
    SELECT g_id, u_id, how FROM matched
    UNION ALL
    SELECT r.record_id, NULL, NULL FROM join_rec r
    WHERE r.role = 'gateway' AND r.dup_of IS NULL
      AND NOT EXISTS (SELECT 1 FROM matched m WHERE m.g_id = r.record_id)
    UNION ALL
    SELECT NULL, u.u_id, NULL FROM join_units u
    WHERE NOT EXISTS (SELECT 1 FROM matched m WHERE m.u_id = u.u_id)
)
SELECT coalesce(c.g_id, u.d_id, u.p_id) AS row_id, c.g_id, u.p_id, u.d_id, c.how
FROM calls c LEFT JOIN join_units u ON u.u_id = c.u_id;
