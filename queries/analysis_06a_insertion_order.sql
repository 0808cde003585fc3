-- analysis: whether DuckDB keeps a table in the order it was inserted (the replay's events table needs it).
SELECT current_setting('preserve_insertion_order')::BOOLEAN;
