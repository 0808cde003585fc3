-- evidence: drop the response fingerprints once joined with their requests (text_resp_fps).
DROP TABLE IF EXISTS text_resp_hashes;
