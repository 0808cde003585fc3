-- evidence: drop the Arrow view of a range's hits (it points at process memory; a case database keeps no such view).
DROP VIEW IF EXISTS arrow_text_prompt_hits;
