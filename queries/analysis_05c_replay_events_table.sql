-- analysis: the replay's events table (analysis_06_replay_events fills it one decode instance at a time).
CREATE OR REPLACE TEMP TABLE analysis_replay_events (
    instance  VARCHAR,
    t         BIGINT,
    kind      BIGINT,
    slots     BIGINT,
    overwrite BIGINT,
    row_id    BIGINT
);
