-- evidence: record the responses whose fingerprints' counts text_spec_memo now holds.
INSERT INTO text_spec_rows
SELECT t.row_id FROM (SELECT DISTINCT row_id FROM text_responses) t
ANTI JOIN text_spec_rows k ON k.row_id = t.row_id;
