-- evidence: drop the Arrow view of a range's response fingerprints (it points at process memory; a case database keeps no such view).
DROP VIEW IF EXISTS arrow_text_resp_hashes;
