-- analysis: DuckDB's temp folder, where the replay spills the pairs it finds (empty: none set).
SELECT current_setting('temp_directory');
