-- analysis: each replayed trigger's never-written slots, copied from their registered Arrow view.
CREATE OR REPLACE TEMP TABLE analysis_trigger_slots AS
SELECT trigger_row_id::BIGINT AS trigger_row_id, unknown_slots::BIGINT AS unknown_slots
FROM arrow_analysis_trigger_slots;
