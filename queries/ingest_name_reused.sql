-- Whether a file named $1 with another SHA-256 than $2 was loaded before (same name, other content: flagged).
-- args: 'a.jsonl', 'bb22'
SELECT count(*) > 0 FROM ingest_files WHERE name = $1 AND sha256 <> $2;
