-- sweep: an empty temp table for the responses to compare (the content match's text_responses).
CREATE OR REPLACE TEMP TABLE text_responses (row_id BIGINT NOT NULL);
