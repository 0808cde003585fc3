-- filing: the tenant notices as the regulator notice and the Regulator sheet count them (drafted = ready + blocked + cannot_notify; the regulator notice apart), and how many were accepted by a mail server.
WITH latest AS (
    -- The send ledger keeps every attempt; a recipient's state is its latest row.
    SELECT notice_id, arg_max(status, (attempted_at, attempts, status)) AS status
    FROM send_ledger GROUP BY notice_id, recipient
)
SELECT count(*) AS drafted,
       count(*) FILTER (WHERE status = 'ready') AS ready,
       count(*) FILTER (WHERE status = 'blocked') AS blocked,
       count(*) FILTER (WHERE status = 'cannot_notify') AS cannot_notify,
       count(*) FILTER (WHERE notice_id IN (SELECT notice_id FROM latest WHERE status = 'accepted')) AS sent
FROM notices
WHERE kind = 'tenant';
