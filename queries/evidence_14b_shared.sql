-- evidence: the shingles the candidate pairs share (outside each response's own prompt), per response model, copied from their registered Arrow view.
CREATE OR REPLACE TEMP TABLE text_shared AS
SELECT model::VARCHAR AS model, hash::BIGINT AS hash FROM arrow_text_shared;
