-- analysis: an empty capacity timeline (instance, role, pool, valid_from), filled from the incident file.
CREATE OR REPLACE TEMP TABLE analysis_capacity (
    instance    VARCHAR NOT NULL,
    role        VARCHAR NOT NULL,   -- prefill | decode
    pool_tokens BIGINT NOT NULL,
    valid_from  TIMESTAMPTZ NOT NULL
);
