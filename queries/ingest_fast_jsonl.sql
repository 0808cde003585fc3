-- Fast path: load canonical JSON Lines file $2 (compression $3: uncompressed, gzip or zstd) as file $1 straight into requests; a value the checked path would reject raises an error instead. Lines are 0 here: DuckDB's parallel reader numbers nothing in file order, so ingest_fast_number sets them from the insertion order once the rows are committed.
-- args: 99, 'testdata/ingest_empty.jsonl.gz', 'gzip'
INSERT INTO requests
WITH src AS (
    SELECT * FROM read_json($2, format = 'newline_delimited', compression = $3, columns = {
        request_id: 'VARCHAR', ts: 'VARCHAR', end_ts: 'VARCHAR', tenant_id: 'VARCHAR',
        model: 'VARCHAR', prompt_tokens: 'VARCHAR', completion_tokens: 'VARCHAR', status: 'VARCHAR',
        prefill_instance: 'VARCHAR', decode_instance: 'VARCHAR', prompt_text: 'VARCHAR',
        response_text: 'VARCHAR'})
), typed AS (
    -- Checks cost little here (a few percent); anything odd raises an error,
    -- and the file goes the checked path instead, which decides.
    SELECT
        -- Required text: present, and not a JSON object or array read as text
        -- (optional text takes those as their JSON text, as the checked path does).
        CASE WHEN request_id IS NULL OR request_id = '' OR ascii(request_id) IN (123, 91) THEN error('request_id') ELSE request_id END AS request_id,
        -- Times: written as a date (DuckDB alone would also take 'epoch' or 'infinity').
        CASE WHEN ascii(ts) BETWEEN 48 AND 57 THEN ts::TIMESTAMPTZ ELSE error('ts') END AS ts,
        CASE WHEN end_ts IS NULL THEN NULL WHEN ascii(end_ts) BETWEEN 48 AND 57 THEN end_ts::TIMESTAMPTZ ELSE error('end_ts') END AS end_ts,
        CASE WHEN tenant_id IS NULL OR tenant_id = '' OR ascii(tenant_id) IN (123, 91) THEN error('tenant_id') ELSE tenant_id END AS tenant_id,
        CASE WHEN model IS NULL OR model = '' OR ascii(model) IN (123, 91) THEN error('model') ELSE model END AS model,
        -- Counts: plain digits only (DuckDB alone would round 11.5 and read hex).
        CASE WHEN regexp_full_match(prompt_tokens, '[0-9]{1,18}') THEN prompt_tokens::BIGINT ELSE error('prompt_tokens') END AS prompt_tokens,
        CASE WHEN completion_tokens IS NULL THEN NULL WHEN regexp_full_match(completion_tokens, '[0-9]{1,18}') THEN completion_tokens::BIGINT ELSE error('completion_tokens') END AS completion_tokens,
        CASE WHEN status IS NULL THEN NULL WHEN regexp_full_match(status, '[0-9]{1,18}') THEN status::INTEGER ELSE error('status') END AS status,
        NULLIF(prefill_instance, '') AS prefill_instance,
        NULLIF(decode_instance, '') AS decode_instance,
        NULLIF(prompt_text, '') AS prompt_text,
        NULLIF(response_text, '') AS response_text
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
