-- duckdb: whether DuckDB keeps a table in the order its rows were inserted (reading a temp table back in pieces, in order, needs it).
SELECT current_setting('preserve_insertion_order')::BOOLEAN;
