-- evidence: add a batch of prompt shingles from their registered Arrow view.
INSERT INTO text_prompt_shingles SELECT row_id, hash FROM arrow_text_prompt_shingles;
