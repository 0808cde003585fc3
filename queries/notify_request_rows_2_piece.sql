-- notify: the tenants' requests at rowid in [$1, $2) of notify_request_rows, in its order (a bounded piece for Go).
-- args: 0, 4096
-- One table and a filter: DuckDB keeps the table's order.
SELECT tenant_id, role, request_id, ts, tier, own FROM notify_request_rows WHERE rowid >= $1 AND rowid < $2;
