-- analysis: the incident's parameters (models, window, pools, contamination model).
-- args: ['glm-5.3'], TIMESTAMPTZ '2026-09-01T00:00:00Z', TIMESTAMPTZ '2026-09-09T14:00:00Z', 681280, 3200000, 1, 1800000000, 600000000, 'replay', 'sorted', '30m0s', '10m0s', 'WAI-TEST'
INSERT INTO analysis_params
SELECT $1::VARCHAR[], $2::TIMESTAMPTZ, $3::TIMESTAMPTZ, $4::BIGINT, $5::BIGINT, $6::BIGINT,
       to_microseconds($7::BIGINT), to_microseconds($8::BIGINT), $7::BIGINT, $8::BIGINT,
       $9::VARCHAR, $10::VARCHAR, $11::VARCHAR, $12::VARCHAR, $13::VARCHAR;
