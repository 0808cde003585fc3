-- analysis: every replayable row (held decode slots, decode instance, end_ts >= ts; any model, any time) in allocation order, with its release position.
-- Held slots: a joined call's decode record says (joined_requests.held_slots:
-- a normal finish held them whatever the gateway says); otherwise served
-- (2xx or no status), as for a canonical row.
-- Allocation order: decode_instance, ts, request_id (byte order), row_id.
-- rel_seq: the row's 0-based place among its instance's releases, ordered by
-- end_ts, request_id, row_id. slots: prompt + completion rounded up to whole
-- pages. overwrite: -1 for a normal row (writes every slot it gets), else
-- 1 + completion_tokens for a trigger.
SELECT r.decode_instance AS instance,
       epoch_us(r.ts) AS ts_us,
       epoch_us(r.end_ts) AS end_us,
       ((greatest(r.prompt_tokens, 0) + greatest(coalesce(r.completion_tokens, 0), 0) + p.page_size - 1)
           // p.page_size) * p.page_size AS slots,
       CASE WHEN t.row_id IS NULL THEN -1
            ELSE 1 + greatest(coalesce(r.completion_tokens, 0), 0) END AS overwrite,
       r.row_id,
       row_number() OVER (PARTITION BY r.decode_instance ORDER BY r.end_ts, r.request_id, r.row_id) - 1 AS rel_seq
FROM requests r
CROSS JOIN analysis_params p
LEFT JOIN analysis_triggers t ON t.row_id = r.row_id
LEFT JOIN joined_requests j ON j.row_id = r.row_id
WHERE coalesce(j.held_slots, r.status IS NULL OR r.status BETWEEN 200 AND 299)
  AND r.decode_instance IS NOT NULL
  AND r.end_ts IS NOT NULL AND r.end_ts >= r.ts
ORDER BY r.decode_instance, r.ts, r.request_id, r.row_id;
