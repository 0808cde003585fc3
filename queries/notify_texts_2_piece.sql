-- notify: the logged texts at rowid in [$1, $2) of notify_texts (a bounded piece for Go).
-- args: 0, 4096
SELECT txt FROM notify_texts WHERE rowid >= $1 AND rowid < $2;
