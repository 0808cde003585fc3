-- analysis: the replay's allocations at rowid in [$1, $2), in the table's order (a bounded piece of analysis_replay_events for Go).
-- args: 0, 4096
-- One table and a filter: DuckDB keeps the table's order.
SELECT t, end_us, slots, overwrite, row_id, request_id
FROM analysis_replay_events
WHERE rowid >= $1 AND rowid < $2;
