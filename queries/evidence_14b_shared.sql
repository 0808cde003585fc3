-- evidence: add a chunk's shared shingles per response model, copied from their registered Arrow view.
INSERT INTO text_shared SELECT model::VARCHAR AS model, hash::BIGINT AS hash FROM arrow_text_shared;
