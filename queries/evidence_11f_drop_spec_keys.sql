-- evidence: drop the responses' (model, hash) pairs once text_spec holds their counts.
DROP TABLE IF EXISTS text_spec_keys;
