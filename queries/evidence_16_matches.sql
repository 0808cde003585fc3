-- evidence: add a chunk's measured matches (shared shingles, run, rare, strong), copied from their registered Arrow view.
INSERT INTO text_matches
SELECT response_row_id::BIGINT, source_row_id::BIGINT, shingles::INTEGER, run::INTEGER, rare::INTEGER, strong::BOOLEAN
FROM arrow_text_matches;
