-- sweep: while it runs, let DuckDB build its temp tables in any row order (every later read orders or aggregates): less memory beside its memory_limit (reset by sweep_10_reset_order).
SET preserve_insertion_order = false;
