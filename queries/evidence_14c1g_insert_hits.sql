-- evidence: add a range's hits (new shared shingles found in its prompts) from their registered Arrow view.
INSERT INTO text_prompt_hits SELECT row_id, hash FROM arrow_text_prompt_hits;
