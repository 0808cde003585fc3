-- Fast path: load canonical JSON Lines file $2 (compression $3: uncompressed, gzip or zstd) as file $1 straight into requests, one row per non-blank line in file order; a line the reader cannot parse, or with a value the checked path might judge otherwise, becomes a placeholder row with row_id -1, which ingest deletes and checks again in Go. Lines are 0 here: DuckDB's parallel reader numbers nothing in file order, so ingest_fast_number sets them from the insertion order once the rows are committed.
-- args: 99, 'testdata/ingest_empty.jsonl.gz', 'gzip'
INSERT INTO requests
WITH src AS (
    -- ignore_errors: a line that does not parse is a row of NULLs, in its place.
    SELECT * FROM read_json($2, format = 'newline_delimited', compression = $3, ignore_errors = true, columns = {
        request_id: 'VARCHAR', ts: 'VARCHAR', end_ts: 'VARCHAR', tenant_id: 'VARCHAR',
        model: 'VARCHAR', prompt_tokens: 'VARCHAR', completion_tokens: 'VARCHAR', status: 'VARCHAR',
        prefill_instance: 'VARCHAR', decode_instance: 'VARCHAR', prompt_text: 'VARCHAR',
        response_text: 'VARCHAR'})
), typed AS (
    -- NULL where a value is not plainly valid; the checked path decides those.
    SELECT
        -- Required text: present, and not a JSON object or array read as text
        -- (optional text takes those as their JSON text, as the checked path does).
        CASE WHEN request_id <> '' AND ascii(request_id) NOT IN (123, 91) THEN request_id END AS request_id,
        -- Times: written as a date (DuckDB alone would also take 'epoch' or
        -- 'infinity'; its cast refuses digits alone), else whole epoch
        -- seconds, or milliseconds from 1e11 on, as the checked path reads them.
        CASE WHEN ascii(ts) BETWEEN 48 AND 57 THEN coalesce(TRY_CAST(ts AS TIMESTAMPTZ),
             CASE WHEN regexp_full_match(ts, '[0-9]{1,15}') THEN
                  CASE WHEN ts::BIGINT < 100000000000 THEN to_timestamp(ts::BIGINT)
                       WHEN ts::BIGINT <= 253402300799999 THEN epoch_ms(ts::BIGINT)::TIMESTAMPTZ END END) END AS ts,
        end_ts AS end_raw,
        CASE WHEN ascii(end_ts) BETWEEN 48 AND 57 THEN coalesce(TRY_CAST(end_ts AS TIMESTAMPTZ),
             CASE WHEN regexp_full_match(end_ts, '[0-9]{1,15}') THEN
                  CASE WHEN end_ts::BIGINT < 100000000000 THEN to_timestamp(end_ts::BIGINT)
                       WHEN end_ts::BIGINT <= 253402300799999 THEN epoch_ms(end_ts::BIGINT)::TIMESTAMPTZ END END) END AS end_ts,
        CASE WHEN tenant_id <> '' AND ascii(tenant_id) NOT IN (123, 91) THEN tenant_id END AS tenant_id,
        CASE WHEN model <> '' AND ascii(model) NOT IN (123, 91) THEN model END AS model,
        -- Counts: plain digits only (DuckDB alone would round 11.5 and read hex).
        CASE WHEN regexp_full_match(prompt_tokens, '[0-9]{1,18}') THEN prompt_tokens::BIGINT END AS prompt_tokens,
        completion_tokens AS completion_raw,
        CASE WHEN regexp_full_match(completion_tokens, '[0-9]{1,18}') THEN completion_tokens::BIGINT END AS completion_tokens,
        status AS status_raw,
        CASE WHEN regexp_full_match(status, '[0-9]{1,9}') THEN status::INTEGER END AS status,
        NULLIF(prefill_instance, '') AS prefill_instance,
        NULLIF(decode_instance, '') AS decode_instance,
        NULLIF(prompt_text, '') AS prompt_text,
        NULLIF(response_text, '') AS response_text
    FROM src
), judged AS (
    SELECT *,
        request_id IS NOT NULL AND tenant_id IS NOT NULL AND model IS NOT NULL AND prompt_tokens IS NOT NULL
        AND ts BETWEEN TIMESTAMPTZ '0001-01-01 00:00:00Z' AND TIMESTAMPTZ '9999-12-31 23:59:59.999999Z'
        AND (end_raw IS NULL OR end_ts BETWEEN TIMESTAMPTZ '0001-01-01 00:00:00Z' AND TIMESTAMPTZ '9999-12-31 23:59:59.999999Z')
        AND (completion_raw IS NULL OR completion_tokens IS NOT NULL)
        AND (status_raw IS NULL OR status IS NOT NULL) AS ok
    FROM typed
)
SELECT CASE WHEN ok THEN 0 ELSE -1 END,
       coalesce(request_id, ''), coalesce(ts, TIMESTAMPTZ '1970-01-01 00:00:00Z'), end_ts,
       coalesce(tenant_id, ''), coalesce(model, ''), coalesce(prompt_tokens, 0), completion_tokens, status,
       prefill_instance, decode_instance, prompt_text, response_text,
       hash(request_id, ts, end_ts, tenant_id, model, prompt_tokens, completion_tokens, status,
            prefill_instance, decode_instance, prompt_text, response_text),
       $1, 0
FROM judged;
