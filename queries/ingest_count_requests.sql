-- Rows in requests (to choose between the whole-table and per-file duplicate searches).
SELECT count(*) FROM requests;
