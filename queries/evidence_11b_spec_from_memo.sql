-- evidence: text_spec from text_spec_memo (every response fingerprint of text_spec_rows held by the prompts of 2 or more tenants of its model, with their count), when it covers the responses to compare.
CREATE OR REPLACE TEMP TABLE text_spec AS
SELECT m.model, m.hash, m.tenants
FROM text_spec_memo m
SEMI JOIN (SELECT DISTINCT model, hash FROM text_resp_fps) h ON h.model = m.model AND h.hash = m.hash;
