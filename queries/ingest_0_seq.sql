-- Create (or restart) the sequence that numbers the lines of a fast-path load.
CREATE OR REPLACE TEMP SEQUENCE ingest_line_seq START 1;
