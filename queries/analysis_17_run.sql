-- analysis: record this run's parameters and the replay's figures.
-- args: 120, 0
INSERT INTO analysis_runs
SELECT p.incident_id, p.contamination, p.allocator, p.page_size, $1::BIGINT, $2::BIGINT,
       (SELECT count(*) FROM affected_requests), (SELECT count(*) FROM exposures), now()
FROM analysis_params p;
