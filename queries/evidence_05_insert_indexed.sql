-- evidence: record the rows of a batch as fingerprinted, from their registered Arrow view.
INSERT INTO text_indexed SELECT row_id, row_hash FROM arrow_text_indexed;
