-- Source records of files $1..$2 equal, value for value, to a record read before them (an earlier file, or an earlier line of the same file): duplicates, counted and not stored twice; the hash is never trusted alone.
-- args: 1, 99
INSERT INTO ingest_record_dups
SELECT DISTINCT n.record_id, n.file_id
FROM source_records n
JOIN source_records o
  ON o.row_hash = n.row_hash AND o.record_id < n.record_id
 AND o.layout = n.layout AND o.role = n.role
 AND o.rid IS NOT DISTINCT FROM n.rid
 AND o.bootstrap_room IS NOT DISTINCT FROM n.bootstrap_room
 AND o.bootstrap_host IS NOT DISTINCT FROM n.bootstrap_host
 AND o.instance IS NOT DISTINCT FROM n.instance
 AND o.ts IS NOT DISTINCT FROM n.ts
 AND o.end_ts IS NOT DISTINCT FROM n.end_ts
 AND o.tenant_id IS NOT DISTINCT FROM n.tenant_id
 AND o.model IS NOT DISTINCT FROM n.model
 AND o.prompt_tokens IS NOT DISTINCT FROM n.prompt_tokens
 AND o.completion_tokens IS NOT DISTINCT FROM n.completion_tokens
 AND o.cached_tokens IS NOT DISTINCT FROM n.cached_tokens
 AND o.status IS NOT DISTINCT FROM n.status
 AND o.finish_type IS NOT DISTINCT FROM n.finish_type
 AND o.finish_message IS NOT DISTINCT FROM n.finish_message
 AND o.prompt_text IS NOT DISTINCT FROM n.prompt_text
 AND o.response_text IS NOT DISTINCT FROM n.response_text
WHERE n.file_id BETWEEN $1 AND $2;
