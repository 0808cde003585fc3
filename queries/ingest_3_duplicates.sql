-- Candidate rows of file $1 equal, value for value, to an earlier row (an earlier file, or an earlier line of this file); times compare as UTC instants; the hash is never trusted alone.
-- args: 99
INSERT INTO ingest_dups
SELECT DISTINCT n.rid
FROM ingest_cand AS n
JOIN ingest_cand AS o
  ON o.request_id = n.request_id
 AND (o.file_id < n.file_id OR (o.file_id = n.file_id AND (o.line < n.line OR (o.line = n.line AND o.rid < n.rid))))
 AND o.row_hash = n.row_hash
 AND o.ts = n.ts
 AND o.end_ts IS NOT DISTINCT FROM n.end_ts
 AND o.tenant_id = n.tenant_id
 AND o.model = n.model
 AND o.prompt_tokens = n.prompt_tokens
 AND o.completion_tokens IS NOT DISTINCT FROM n.completion_tokens
 AND o.status IS NOT DISTINCT FROM n.status
 AND o.prefill_instance IS NOT DISTINCT FROM n.prefill_instance
 AND o.decode_instance IS NOT DISTINCT FROM n.decode_instance
 AND o.prompt_text IS NOT DISTINCT FROM n.prompt_text
 AND o.response_text IS NOT DISTINCT FROM n.response_text
WHERE n.file_id = $1;
