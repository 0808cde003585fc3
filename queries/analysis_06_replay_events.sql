-- analysis: one decode instance's ($1) replayable rows in time order (ts, row_id), appended to analysis_replay_events in that order; the reader puts rows of one time in request_id byte order, and the replay makes each row's release (at end_us) itself.
-- args: 'decode-a'
-- Replayable: held decode slots, a decode instance, end_ts >= ts; any model,
-- any time. Held slots: a joined call's decode record says
-- (joined_requests.held_slots: a normal finish held them whatever the
-- gateway says); otherwise served (2xx or no status), as for a canonical row.
-- slots: prompt + completion rounded up to whole pages. overwrite: -1 for a
-- normal row (writes every slot it gets), else 1 + completion_tokens for a
-- trigger. request_id orders the releases at equal end times.
-- Only the allocations are sorted: the releases, in (end_us, request_id,
-- row_id) order, are merged in Go from a heap of the rows in flight
-- (releaseMerge), half the rows the query sorted when it gave both.
-- A table, read back in ranges of rowid (analysis_06b_replay_chunk): a
-- query's result reaches Go whole (the driver materialises it, outside
-- DuckDB's memory_limit); a temp table spills. The table keeps the ORDER
-- BY's order (preserve_insertion_order, checked by queries.InsertionOrdered),
-- and the reader checks the times again. One instance at a time, each read
-- before the next is made: the table holds one instance's rows, not the log's.
INSERT INTO analysis_replay_events
WITH replayable AS (
    SELECT r.request_id, r.row_id,
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
SELECT ts_us, end_us, slots, overwrite, row_id, request_id
FROM replayable
-- Sorted on two integers, not on the ids (41 bytes whose first 9 every id
-- shares): the allocation order (ts, request_id byte order, row_id)
-- differs only among rows of one microsecond, which the reader sorts
-- (runReplay).
ORDER BY ts_us, row_id;
