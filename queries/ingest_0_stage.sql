-- Create (or empty) the staging table a file's checked rows go through before requests.
CREATE OR REPLACE TEMP TABLE ingest_stage (
    line              BIGINT NOT NULL,
    request_id        VARCHAR NOT NULL,
    ts                TIMESTAMPTZ NOT NULL,
    end_ts            TIMESTAMPTZ,
    tenant_id         VARCHAR NOT NULL,
    model             VARCHAR NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT,
    status            INTEGER,
    prefill_instance  VARCHAR,
    decode_instance   VARCHAR,
    prompt_text       VARCHAR,
    response_text     VARCHAR
);
