-- analysis: the triggers with a logged response: the responses the content match compares (package textmatch).
CREATE OR REPLACE TEMP TABLE text_responses AS
SELECT t.row_id
FROM analysis_triggers t JOIN requests r ON r.row_id = t.row_id
WHERE r.response_text IS NOT NULL;
