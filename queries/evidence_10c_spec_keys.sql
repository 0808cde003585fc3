-- evidence: the (model, hash) pairs of the responses' fingerprints whose tenants evidence_10f_spec_piece counts, each once.
CREATE OR REPLACE TEMP TABLE text_spec_keys AS
SELECT DISTINCT model, hash FROM text_resp_fps;
