-- evidence: an empty temp table for the shingles the candidate pairs share (outside each response's own prompt), per response model; each chunk of pairs adds its own.
CREATE OR REPLACE TEMP TABLE text_shared (model VARCHAR NOT NULL, hash BIGINT NOT NULL);
