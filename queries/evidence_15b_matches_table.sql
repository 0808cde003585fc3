-- evidence: an empty temp table for the measured matches; each chunk of pairs adds its own.
CREATE OR REPLACE TEMP TABLE text_matches (
    response_row_id BIGINT NOT NULL, source_row_id BIGINT NOT NULL,
    shingles INTEGER NOT NULL, run INTEGER NOT NULL, rare INTEGER NOT NULL, strong BOOLEAN NOT NULL
);
