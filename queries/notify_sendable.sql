-- notify: every ready notice with its addresses, Message-ID, file and SHA-256, in notice order.
SELECT notice_id, coalesce(tenant_id, '') AS tenant_id, recipients, message_id, file, coalesce(sha256, '') AS sha256
FROM notices
WHERE status = 'ready'
ORDER BY notice_id;
