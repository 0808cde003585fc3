-- Set the row hash of file $1's rows appended by the checked path (row_hash 0 until then), as the fast path computes it.
-- args: 99
UPDATE requests
SET row_hash = hash(request_id, ts, end_ts, tenant_id, model, prompt_tokens, completion_tokens, status,
                    prefill_instance, decode_instance, prompt_text, response_text)
WHERE file_id = $1 AND row_hash = 0;
