-- Fast path: load canonical JSON Lines file $2 (compression $3: uncompressed, gzip or zstd) as file $1 straight into requests; a value the checked path would reject raises an error instead; row_id and line are set by ingest_fast_number.
-- args: 99, 'testdata/ingest_empty.jsonl.gz', 'gzip'
INSERT INTO requests
WITH src AS (
    SELECT * FROM read_json($2, format = 'newline_delimited', compression = $3, columns = {
        request_id: 'VARCHAR', ts: 'VARCHAR', end_ts: 'VARCHAR', tenant_id: 'VARCHAR',
        model: 'VARCHAR', prompt_tokens: 'VARCHAR', completion_tokens: 'VARCHAR', status: 'VARCHAR',
        prefill_instance: 'VARCHAR', decode_instance: 'VARCHAR', prompt_text: 'VARCHAR',
        response_text: 'VARCHAR'})
), typed AS (
    SELECT
        -- Required text: present, not empty, not a JSON object, array or boolean read as text.
        CASE WHEN coalesce(request_id, '') = '' OR left(request_id, 1) IN ('{', '[') OR request_id IN ('true', 'false')
             THEN error('request_id') ELSE request_id END AS request_id,
        -- Times: written as a date (DuckDB alone would also take 'epoch' or
        -- 'infinity'), in the years 1 to 9999 like the checked path.
        CASE WHEN left(ts, 1) BETWEEN '0' AND '9' THEN ts::TIMESTAMPTZ ELSE error('ts') END AS ts,
        CASE WHEN end_ts IS NULL THEN NULL
             WHEN left(end_ts, 1) BETWEEN '0' AND '9' THEN end_ts::TIMESTAMPTZ ELSE error('end_ts') END AS end_ts,
        CASE WHEN coalesce(tenant_id, '') = '' OR left(tenant_id, 1) IN ('{', '[') OR tenant_id IN ('true', 'false')
             THEN error('tenant_id') ELSE tenant_id END AS tenant_id,
        CASE WHEN coalesce(model, '') = '' OR left(model, 1) IN ('{', '[') OR model IN ('true', 'false')
             THEN error('model') ELSE model END AS model,
        -- Integers: exactly an integer (DuckDB would round 11.5), not negative.
        CASE WHEN TRY_CAST(prompt_tokens AS BIGINT) >= 0 AND TRY_CAST(prompt_tokens AS BIGINT)::VARCHAR = prompt_tokens
             THEN prompt_tokens::BIGINT ELSE error('prompt_tokens') END AS prompt_tokens,
        CASE WHEN completion_tokens IS NULL THEN NULL
             WHEN TRY_CAST(completion_tokens AS BIGINT) >= 0 AND TRY_CAST(completion_tokens AS BIGINT)::VARCHAR = completion_tokens
             THEN completion_tokens::BIGINT ELSE error('completion_tokens') END AS completion_tokens,
        CASE WHEN status IS NULL THEN NULL
             WHEN TRY_CAST(status AS INTEGER) >= 0 AND TRY_CAST(status AS INTEGER)::VARCHAR = status
             THEN status::INTEGER ELSE error('status') END AS status,
        -- Optional text: empty is absent.
        CASE WHEN left(prefill_instance, 1) IN ('{', '[') OR prefill_instance IN ('true', 'false')
             THEN error('prefill_instance') ELSE NULLIF(prefill_instance, '') END AS prefill_instance,
        CASE WHEN left(decode_instance, 1) IN ('{', '[') OR decode_instance IN ('true', 'false')
             THEN error('decode_instance') ELSE NULLIF(decode_instance, '') END AS decode_instance,
        CASE WHEN left(prompt_text, 1) IN ('{', '[') OR prompt_text IN ('true', 'false')
             THEN error('prompt_text') ELSE NULLIF(prompt_text, '') END AS prompt_text,
        CASE WHEN left(response_text, 1) IN ('{', '[') OR response_text IN ('true', 'false')
             THEN error('response_text') ELSE NULLIF(response_text, '') END AS response_text
    FROM src
)
SELECT 0, request_id,
       CASE WHEN ts < TIMESTAMPTZ '0001-01-01 00:00:00Z' OR ts > TIMESTAMPTZ '9999-12-31 23:59:59.999999Z' THEN error('ts') ELSE ts END,
       CASE WHEN end_ts < TIMESTAMPTZ '0001-01-01 00:00:00Z' OR end_ts > TIMESTAMPTZ '9999-12-31 23:59:59.999999Z' THEN error('end_ts') ELSE end_ts END,
       tenant_id, model, prompt_tokens, completion_tokens, status,
       prefill_instance, decode_instance, prompt_text, response_text,
       hash(request_id, ts, end_ts, tenant_id, model, prompt_tokens, completion_tokens, status,
            prefill_instance, decode_instance, prompt_text, response_text),
       $1, 0
FROM typed;
