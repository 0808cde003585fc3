-- Report summary: one row of headline counts over the ingest ledger, the analysis outputs and the notices.
WITH ingest AS (
    SELECT count(*) AS files,
           coalesce(sum(rows_read), 0)      AS rows_read,
           coalesce(sum(rows_loaded), 0)    AS rows_loaded,
           coalesce(sum(rows_rejected), 0)  AS rows_rejected,
           coalesce(sum(rows_duplicate), 0) AS rows_duplicate,
           coalesce(sum(size_bytes), 0)     AS bytes
    FROM ingest_files
), affected AS (
    SELECT count(*) AS affected_requests,
           count(*) FILTER (WHERE decode_instance IS NULL) AS affected_no_decode,
           coalesce(sum(unknown_slots), 0) AS unknown_slots,
           min(ts) AS first_trigger_ts, max(ts) AS last_trigger_ts
    FROM affected_requests
), expo AS (
    SELECT count(*) AS exposures,
           count(*) FILTER (WHERE NOT self_exposure) AS cross_exposures,
           count(*) FILTER (WHERE self_exposure) AS self_exposures,
           count(DISTINCT source_row_id) FILTER (WHERE NOT self_exposure) AS source_requests
    FROM exposures
), ten AS (
    SELECT count(*) AS tenants_listed,
           count(*) FILTER (WHERE role IN ('recipient', 'both')) AS recipient_tenants,
           count(*) FILTER (WHERE role IN ('source', 'both')) AS source_tenants,
           count(*) FILTER (WHERE role = 'both') AS both_tenants
    FROM tenants
), latest AS (
    -- The send ledger keeps every attempt; a recipient's state is its latest row.
    SELECT notice_id, recipient,
           arg_max(status, (attempted_at, attempts, status)) AS status
    FROM send_ledger GROUP BY notice_id, recipient
), sent AS (
    SELECT count(DISTINCT notice_id) FILTER (WHERE status = 'accepted') AS notices_sent,
           count(DISTINCT notice_id) FILTER (WHERE status = 'failed') AS notices_failed
    FROM latest
), reg_sent AS (
    -- When the regulator notice was accepted: the filing time for the 72-hour check.
    SELECT min(s.attempted_at) AS regulator_sent_at
    FROM send_ledger s JOIN notices n USING (notice_id)
    WHERE n.kind = 'regulator' AND s.status = 'accepted'
), drafted AS (
    SELECT count(*) AS notices_drafted,
           count(*) FILTER (WHERE kind = 'tenant') AS tenant_notices,
           count(*) FILTER (WHERE kind = 'regulator') AS regulator_notices,
           count(*) FILTER (WHERE status = 'ready') AS notices_ready,
           count(*) FILTER (WHERE status = 'blocked') AS notices_blocked,
           count(*) FILTER (WHERE status = 'cannot_notify') AS notices_cannot_notify
    FROM notices
)
SELECT (SELECT count(*) FROM requests) AS requests,
       ingest.*, affected.*, expo.*, ten.*, drafted.*, sent.*, reg_sent.*,
       (SELECT count(*) FROM analysis_runs) AS analysis_runs,
       -- the real-layout join: requests it made, those no gateway record
       -- claims (tenant_id '': counted apart, never notified), and the
       -- two trigger tests
       (SELECT count(*) FROM joined_requests) AS joined_requests,
       (SELECT count(*) FROM requests WHERE tenant_id = '') AS unattributed_requests,
       (SELECT count(*) FROM affected_requests WHERE tenant_id = '') AS unattributed_affected,
       (SELECT count(DISTINCT source_row_id) FROM exposures WHERE source_tenant_id = '') AS unattributed_sources,
       (SELECT count(*) FROM trigger_checks WHERE in_scope AND cut_at_prefill) AS affected_cut,
       (SELECT count(*) FROM trigger_checks WHERE disagreement IS NOT NULL) AS trigger_disagreements
FROM ingest, affected, expo, ten, drafted, sent, reg_sent;
