-- analysis: the replay's table of one decode instance's allocations (analysis_06_replay_events fills it; remade for each instance).
CREATE OR REPLACE TEMP TABLE analysis_replay_events (
    t          BIGINT,
    end_us     BIGINT,
    slots      BIGINT,
    overwrite  BIGINT,
    row_id     BIGINT,
    request_id VARCHAR
);
