-- notify: append one state of one notice's send to one address (sending before SMTP; accepted, deferred or rejected after).
-- args: 'WAI-TEST/tenant/t-alpha', 'ops@alpha.example', '<x@leakmap>', 'sending', 1, '', TIMESTAMPTZ '2026-09-10T09:00:00Z', 'abc'
INSERT INTO send_ledger (notice_id, recipient, message_id, status, attempts, server_reply, attempted_at, seq, sha256)
VALUES ($1, $2, $3, $4, $5, $6, $7, nextval('send_ledger_seq'), $8);
