-- analysis: one row of the capacity timeline (a handful per case).
-- args: 'p1', 'prefill', 1000000, TIMESTAMPTZ '2026-09-01T10:00:03Z'
INSERT INTO analysis_capacity VALUES ($1, $2, $3, $4);
