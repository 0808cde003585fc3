-- evidence: true for a case fingerprinted before prompt shingles were kept (its prompts have fingerprints but no shingle): it is fingerprinted again.
SELECT NOT EXISTS (SELECT 1 FROM text_prompt_shingles) AND EXISTS (SELECT 1 FROM text_fingerprints WHERE kind = 0);
