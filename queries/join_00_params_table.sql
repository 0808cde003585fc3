-- join: an empty one-row-to-be temp table for the join's tolerances, read by the join queries.
CREATE OR REPLACE TEMP TABLE join_params (
    room_us       BIGINT,    -- prefill-decode start times at most this far apart
    gateway_us    BIGINT,    -- gateway-engine start times at most this far apart (no shared id)
    room_label    VARCHAR,   -- the tolerances as written in join_report reasons
    gateway_label VARCHAR
);
