-- evidence: the measured matches (shared shingles, run, rare, strong), copied from their registered Arrow view.
CREATE OR REPLACE TEMP TABLE text_matches AS
SELECT response_row_id::BIGINT AS response_row_id, source_row_id::BIGINT AS source_row_id,
       shingles::INTEGER AS shingles, run::INTEGER AS run, rare::INTEGER AS rare, strong::BOOLEAN AS strong
FROM arrow_text_matches;
