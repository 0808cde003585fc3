-- casedb: whether the case's content index is of an earlier version (text_fingerprints with a kind column and no tm): it is forgotten, and the next analysis makes it again.
SELECT count(*) FILTER (WHERE column_name = 'kind') > 0
FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main' AND table_name = 'text_fingerprints';
