-- notify: every ready notice with its latest ledger state ('' when never attempted), in notice order.
WITH latest AS (
    SELECT notice_id, arg_max(status, seq) AS status, max(attempts) AS attempts
    FROM send_ledger GROUP BY notice_id
)
SELECT n.notice_id, n.recipients, n.message_id, n.file, coalesce(n.sha256, '') AS sha256,
       coalesce(l.status, '') AS last_status, coalesce(l.attempts, 0) AS attempts
FROM notices n LEFT JOIN latest l USING (notice_id)
WHERE n.status = 'ready'
ORDER BY n.notice_id;
