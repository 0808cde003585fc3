-- notify: the latest send state of each (notice, address, Message-ID): status, attempts, the server's reply, the SHA-256 of what was sent.
SELECT notice_id, recipient, message_id,
       arg_max(status, seq) AS status, max(attempts) AS attempts,
       arg_max(server_reply, seq) AS server_reply, coalesce(arg_max(sha256, seq), '') AS sha256
FROM send_ledger
GROUP BY notice_id, recipient, message_id
ORDER BY notice_id, recipient, message_id;
