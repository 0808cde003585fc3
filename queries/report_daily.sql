-- Report per-day counts (UTC days) over the exposure window and any trigger or sweep leak outside it: affected requests, recipient tenants, cross-tenant exposures, and the sweep's leaking responses (NULL when no sweep ran).
-- args: TIMESTAMPTZ '2026-08-31T00:00:00Z', TIMESTAMPTZ '2026-09-02T12:00:00Z'
WITH sweep AS (
    SELECT day, sum(leaking_responses) AS leaking FROM sweep_days GROUP BY day
), bounds AS (
    SELECT least(CAST($1 AS TIMESTAMPTZ), min(ts),
                 (SELECT CAST(min(day) AS TIMESTAMP) AT TIME ZONE 'UTC' FROM sweep WHERE leaking > 0)) AS lo,
           greatest(CAST($2 AS TIMESTAMPTZ) - INTERVAL 1 MICROSECOND, max(ts),
                    (SELECT CAST(max(day) AS TIMESTAMP) AT TIME ZONE 'UTC' FROM sweep WHERE leaking > 0)) AS hi
    FROM affected_requests
), days AS (
    SELECT CAST(d AS DATE) AS day
    FROM bounds, generate_series(date_trunc('day', lo), date_trunc('day', hi), INTERVAL 1 DAY) g(d)
), aff AS (
    -- A time's UTC day from its epoch, not CAST(ts AS DATE): that cast goes
    -- through ICU's calendar for every row (1 s of CPU at 10M requests).
    SELECT DATE '1970-01-01' + CAST(floor(epoch_us(ts) / 86400000000) AS INTEGER) AS day, count(*) AS affected_requests,
           count(DISTINCT tenant_id) FILTER (WHERE tenant_id <> '') AS recipient_tenants -- '' is no tenant (unattributed)
    FROM affected_requests GROUP BY ALL
), expo AS (
    SELECT DATE '1970-01-01' + CAST(floor(epoch_us(trigger_ts) / 86400000000) AS INTEGER) AS day, count(*) AS cross_exposures
    FROM exposures WHERE NOT self_exposure GROUP BY ALL
)
SELECT days.day,
       coalesce(aff.affected_requests, 0) AS affected_requests,
       coalesce(aff.recipient_tenants, 0) AS recipient_tenants,
       coalesce(expo.cross_exposures, 0) AS cross_exposures,
       CASE WHEN EXISTS (SELECT 1 FROM sweep_days) THEN coalesce(sweep.leaking, 0) END AS sweep_leaking_responses
FROM days LEFT JOIN aff USING (day) LEFT JOIN expo USING (day) LEFT JOIN sweep USING (day)
ORDER BY days.day;
