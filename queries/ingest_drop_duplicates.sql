-- Drop the rows of file $1 equal, value for value, to an earlier row of the case; times compare as UTC instants, the hash only narrows the search.
-- args: 99
DELETE FROM requests
WHERE file_id = $1
  AND row_id IN (
    SELECT n.row_id
    FROM requests AS n
    JOIN requests AS o
      ON o.row_hash = n.row_hash
     AND o.row_id < n.row_id
     AND o.request_id = n.request_id
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
    WHERE n.file_id = $1);
