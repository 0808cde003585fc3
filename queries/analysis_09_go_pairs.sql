-- analysis: the (source, trigger) pairs found by the replay in Go (stale slots), copied from their registered Arrow view.
CREATE OR REPLACE TEMP TABLE analysis_pairs AS
SELECT source_row_id::BIGINT AS source_row_id, trigger_row_id::BIGINT AS trigger_row_id,
       slots::BIGINT AS slots
FROM arrow_analysis_pairs;
