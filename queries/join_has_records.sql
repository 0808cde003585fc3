-- join: whether the case holds any source record (a real-layout log), so ingest knows to join.
SELECT EXISTS (SELECT 1 FROM source_records);
