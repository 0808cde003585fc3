-- sweep: while it runs, let DuckDB's allocator return freed memory to the system in the background (reset by sweep_10b_reset_purge).
SET allocator_background_threads = true;
