-- evidence: add a batch of fingerprints from their registered Arrow view.
INSERT INTO text_fingerprints SELECT row_id, hash, tm FROM arrow_text_fingerprints;
