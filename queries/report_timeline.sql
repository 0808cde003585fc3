-- Report timeline: the incident file's times ($1 launched, $2 window start, $3 window end, $4 discovered, $5 aware, $6 contained, $7 as_of) and the case's own events, in time order; event and source are keys of the catalogue's report.timeline.
-- args: TIMESTAMPTZ '2026-08-27T00:00:00Z', TIMESTAMPTZ '2026-08-27T00:00:00Z', TIMESTAMPTZ '2026-09-09T14:00:00Z', TIMESTAMPTZ '2026-09-08T23:11:00Z', TIMESTAMPTZ '2026-09-09T10:00:00Z', NULL, TIMESTAMPTZ '2026-09-10T09:00:00Z'
WITH latest AS (
    SELECT notice_id, recipient, arg_max(status, (attempted_at, attempts, status)) AS status,
           max(attempted_at) AS attempted_at
    FROM send_ledger GROUP BY notice_id, recipient
), accepted AS (
    SELECT l.notice_id, n.kind, l.attempted_at
    FROM latest l LEFT JOIN notices n USING (notice_id)
    WHERE l.status = 'accepted'
), events(seq, event, ts, source) AS (
    SELECT 1, 'launched', CAST($1 AS TIMESTAMPTZ), 'incident_file'
    UNION ALL SELECT 2, 'window_start', CAST($2 AS TIMESTAMPTZ), 'incident_file'
    UNION ALL SELECT 3, 'first_affected', (SELECT min(ts) FROM affected_requests), 'case_database'
    UNION ALL SELECT 4, 'last_affected', (SELECT max(ts) FROM affected_requests), 'case_database'
    UNION ALL SELECT 5, 'discovered', CAST($4 AS TIMESTAMPTZ), 'incident_file'
    UNION ALL SELECT 6, 'aware', CAST($5 AS TIMESTAMPTZ), 'incident_file'
    UNION ALL SELECT 7, 'contained', CAST($6 AS TIMESTAMPTZ), 'incident_file'
    UNION ALL SELECT 8, 'window_end', CAST($3 AS TIMESTAMPTZ), 'incident_file'
    -- Notices bear the as_of date; their drafting clock time stays in the database.
    UNION ALL SELECT 9, 'notices_drafted', (SELECT CASE WHEN count(*) > 0 THEN CAST($7 AS TIMESTAMPTZ) END FROM notices), 'case_database'
    UNION ALL SELECT 10, 'regulator_accepted', (SELECT min(attempted_at) FROM accepted WHERE kind = 'regulator'), 'case_database'
    UNION ALL SELECT 11, 'first_tenant_accepted', (SELECT min(attempted_at) FROM accepted WHERE kind IS DISTINCT FROM 'regulator'), 'case_database'
    UNION ALL SELECT 12, 'last_tenant_accepted', (SELECT max(attempted_at) FROM accepted WHERE kind IS DISTINCT FROM 'regulator'), 'case_database'
    UNION ALL SELECT 13, 'deadline', CAST($5 AS TIMESTAMPTZ) + INTERVAL 72 HOUR, 'aware_72h'
    UNION ALL SELECT 14, 'as_of', CAST($7 AS TIMESTAMPTZ), 'as_of'
)
SELECT event, ts, source
FROM events
WHERE ts IS NOT NULL
ORDER BY ts, seq;
