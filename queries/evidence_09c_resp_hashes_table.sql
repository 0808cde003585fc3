-- evidence: an empty temp table for the fingerprints of the responses to compare, hashed from their texts a range of rows at a time.
CREATE OR REPLACE TEMP TABLE text_resp_hashes (row_id BIGINT NOT NULL, hash BIGINT NOT NULL);
