-- evidence: text_spec from text_spec_memo (every response fingerprint of text_spec_rows held by the prompts of 2 or more tenants of its model, with their count), when it covers the responses to compare: copied whole, small as it is (evidence_12 looks each response fingerprint up in it; distinct pairs of all responses' fingerprints cost more than the copy).
CREATE OR REPLACE TEMP TABLE text_spec AS
SELECT model, hash, tenants FROM text_spec_memo;
