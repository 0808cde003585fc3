-- evidence: drop the prompt shingles of rows gone from requests or changed since they were fingerprinted.
DELETE FROM text_prompt_shingles WHERE row_id IN (
    SELECT t.row_id FROM text_indexed t ANTI JOIN requests r ON r.row_id = t.row_id AND r.row_hash = t.row_hash);
