-- evidence: add a batch of fingerprints from their registered Arrow view.
INSERT INTO text_fingerprints SELECT row_id, kind, hash, pos FROM arrow_text_fingerprints;
