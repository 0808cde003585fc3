-- analysis: an empty one-row-to-be temp table for the incident's parameters, read by every later analysis query.
CREATE OR REPLACE TEMP TABLE analysis_params (
    models                VARCHAR[],
    window_start          TIMESTAMPTZ,   -- inclusive
    window_end            TIMESTAMPTZ,   -- exclusive
    prefill_pool          BIGINT,        -- default threshold
    decode_pool           BIGINT,        -- default decode pool
    page_size             BIGINT,
    residency_lookback    INTERVAL,
    possible_lookback     INTERVAL,
    residency_lookback_us BIGINT,
    possible_lookback_us  BIGINT,
    contamination         VARCHAR,       -- replay | residency
    allocator             VARCHAR,
    residency_label       VARCHAR,       -- the lookbacks as written in evidence
    possible_label        VARCHAR,
    incident_id           VARCHAR
);
