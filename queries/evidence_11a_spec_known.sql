-- evidence: true when every response to compare was compared before with these fingerprints (text_spec_rows): their counts are all in text_spec_memo, and none need be counted again.
SELECT NOT EXISTS (SELECT 1 FROM text_responses t ANTI JOIN text_spec_rows k ON k.row_id = t.row_id);
