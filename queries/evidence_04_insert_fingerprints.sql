-- evidence: add a batch of fingerprints from their registered Arrow view.
INSERT INTO text_fingerprints SELECT row_id, kind, hash FROM arrow_text_fingerprints;
