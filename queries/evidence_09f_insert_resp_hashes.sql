-- evidence: add a range's response fingerprints from their registered Arrow view.
INSERT INTO text_resp_hashes SELECT row_id, hash FROM arrow_text_resp_hashes;
