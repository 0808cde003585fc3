-- evidence: drop the candidate pairs' texts once every chunk is measured.
DROP TABLE IF EXISTS text_pair_texts;
