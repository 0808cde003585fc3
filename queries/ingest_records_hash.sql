-- Set the row hash of the source records of files $1..$2 (row_hash 0 until then): the record's values, without where it was read.
-- args: 1, 99
UPDATE source_records
SET row_hash = hash(layout, role, rid, bootstrap_room, bootstrap_host, instance, ts, end_ts, tenant_id, model,
                    prompt_tokens, completion_tokens, cached_tokens, status, finish_type, finish_message,
                    prompt_text, response_text)
WHERE file_id BETWEEN $1 AND $2 AND row_hash = 0;
