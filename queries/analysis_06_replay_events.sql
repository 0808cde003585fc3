-- analysis: one decode instance's ($1) replay events in time order, appended to analysis_replay_events in that order: each replayable row's allocation (ts) and release (end_ts), releases first at equal times.
-- args: 'decode-a'
-- Replayable: held decode slots, a decode instance, end_ts >= ts; any model,
-- any time. Held slots: a joined call's decode record says
-- (joined_requests.held_slots: a normal finish held them whatever the
-- gateway says); otherwise served (2xx or no status), as for a canonical row.
-- kind: 0 release, 1 allocation, 2 allocation released right after itself
-- (end_ts = ts: "releases first" would free it before it holds anything; it
-- has no release event). Order: instance, time, releases before
-- allocations, then request_id (byte order), then row_id: the rows'
-- allocation order is (ts, request_id, row_id), their release order
-- (end_ts, request_id, row_id). slots: prompt + completion rounded up to
-- whole pages. overwrite: -1 for a normal row (writes every slot it gets),
-- else 1 + completion_tokens for a trigger. A release carries neither.
-- A table, read back in ranges of rowid (analysis_06b_replay_chunk): a
-- query's result reaches Go whole (the driver materialises it, outside
-- DuckDB's memory_limit), and the events are twice the rows; a temp table
-- spills. The table keeps the ORDER BY's order (preserve_insertion_order,
-- checked by queries.InsertionOrdered), and the reader checks it again. One instance
-- at a time, in instance order (analysis_05d): a sort of all the events at
-- once went 2.5 GiB past memory_limit at 30M requests.
INSERT INTO analysis_replay_events
WITH replayable AS (
    SELECT r.decode_instance AS instance, r.request_id, r.row_id,
           epoch_us(r.ts) AS ts_us, epoch_us(r.end_ts) AS end_us,
           ((greatest(r.prompt_tokens, 0) + greatest(coalesce(r.completion_tokens, 0), 0) + p.page_size - 1)
               // p.page_size) * p.page_size AS slots,
           CASE WHEN t.row_id IS NULL THEN -1
                ELSE 1 + greatest(coalesce(r.completion_tokens, 0), 0) END AS overwrite
    FROM requests r
    CROSS JOIN analysis_params p
    LEFT JOIN analysis_triggers t ON t.row_id = r.row_id
    LEFT JOIN joined_requests j ON j.row_id = r.row_id
    WHERE coalesce(j.held_slots, r.status IS NULL OR r.status BETWEEN 200 AND 299)
      AND r.decode_instance = $1
      AND r.end_ts IS NOT NULL AND r.end_ts >= r.ts
)
SELECT instance,
       CASE WHEN e.alloc THEN ts_us ELSE end_us END AS t,
       (CASE WHEN NOT e.alloc THEN 0 WHEN end_us = ts_us THEN 2 ELSE 1 END)::BIGINT AS kind,
       CASE WHEN e.alloc THEN slots ELSE 0 END AS slots,
       CASE WHEN e.alloc THEN overwrite ELSE 0 END AS overwrite,
       row_id
FROM replayable
CROSS JOIN (VALUES (false), (true)) e(alloc)
WHERE e.alloc OR end_us > ts_us
ORDER BY t, e.alloc, request_id, row_id;
