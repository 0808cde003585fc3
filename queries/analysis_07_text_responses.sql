-- analysis: the triggers, whose logged responses (when there is one) the content match compares (package textmatch): evidence_09e reads only the responses there are.
-- Not filtered on response_text here: that reads every request's response
-- (10 s at 100M requests), which evidence_09e reads again in its ranges.
CREATE OR REPLACE TEMP TABLE text_responses AS
SELECT row_id FROM analysis_triggers;
