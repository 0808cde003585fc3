-- Go reader: insert file $1's rows from the registered Arrow view arrow_ingest_rows (typed, numbered with their lines), with the row hash as the other paths compute it.
-- args: 99
INSERT INTO requests
SELECT row_id, request_id, ts::TIMESTAMPTZ, end_ts::TIMESTAMPTZ, tenant_id, model, prompt_tokens, completion_tokens, status,
       prefill_instance, decode_instance, prompt_text, response_text,
       hash(request_id, ts::TIMESTAMPTZ, end_ts::TIMESTAMPTZ, tenant_id, model, prompt_tokens, completion_tokens, status,
            prefill_instance, decode_instance, prompt_text, response_text),
       $1, line
FROM arrow_ingest_rows;
