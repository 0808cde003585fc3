-- evidence: an empty temp table for the new shared shingles found in each prompt read again (row_id, hash: once per prompt).
CREATE OR REPLACE TEMP TABLE text_prompt_hits (row_id BIGINT NOT NULL, hash BIGINT NOT NULL);
