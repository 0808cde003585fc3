-- sweep: keep the strong matches of this sweep.
INSERT INTO sweep_matches
SELECT response_row_id, source_row_id, shingles, run, rare FROM text_matches WHERE strong;
