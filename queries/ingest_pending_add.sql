-- Fast path: mark file $1 ($2: its path) as loading, in the transaction that commits its rows; casedb.Open deletes the rows of a file still marked (a crash).
-- args: 99, 'logs/x.jsonl'
INSERT INTO ingest_pending VALUES ($1, $2);
