-- notify: the identifiers at rowid in [$1, $2) of notify_identifiers, in its order (a bounded piece for Go).
-- args: 0, 4096
SELECT tenant_id, kind, value FROM notify_identifiers WHERE rowid >= $1 AND rowid < $2;
