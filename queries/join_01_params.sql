-- join: the tolerances of this join (microseconds, and as written).
-- args: 30000000, 2000000, '30s', '2s'
INSERT INTO join_params SELECT $1::BIGINT, $2::BIGINT, $3::VARCHAR, $4::VARCHAR;
