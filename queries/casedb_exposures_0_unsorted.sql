-- casedb: whether the case is of an earlier version whose exposures may be out of exposures.csv's order (the table exists, the marker exposures_in_order does not).
SELECT count(*) FILTER (WHERE table_name = 'exposures') > 0 AND count(*) FILTER (WHERE table_name = 'exposures_in_order') = 0
FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main';
