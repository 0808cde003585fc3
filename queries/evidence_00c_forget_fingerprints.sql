-- evidence: forget every fingerprint (a case fingerprinted before prompt shingles were kept is done again).
DELETE FROM text_fingerprints;
