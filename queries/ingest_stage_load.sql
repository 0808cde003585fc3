-- Move the staged rows of file $1 into requests in the order they were read (no sort: on 2M CSV rows it raised peak memory from 0.62 to 1.03 GB); row_id = file_id << 32 | line is unique across the case.
-- args: 99
INSERT INTO requests
SELECT ($1::BIGINT << 32) + line,
       request_id, ts, end_ts, tenant_id, model, prompt_tokens, completion_tokens, status,
       prefill_instance, decode_instance, prompt_text, response_text,
       hash(request_id, ts, end_ts, tenant_id, model, prompt_tokens, completion_tokens, status,
            prefill_instance, decode_instance, prompt_text, response_text),
       $1, line
FROM ingest_stage;
