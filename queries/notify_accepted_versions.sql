-- notify: each notice's messages that at least one address accepted, with the SHA-256 sent, first accepted first.
SELECT notice_id, message_id, coalesce(sha256, '') AS sha256
FROM send_ledger
WHERE status = 'accepted'
GROUP BY notice_id, message_id, coalesce(sha256, '')
ORDER BY notice_id, min(seq), message_id;
