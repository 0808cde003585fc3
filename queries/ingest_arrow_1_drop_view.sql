-- Go reader: drop the Arrow view of the rows (it points at process memory; a case database keeps no such view).
DROP VIEW IF EXISTS arrow_ingest_rows;
