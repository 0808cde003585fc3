-- evidence: drop the Arrow view of the shared shingles (it points at process memory; a case database keeps no such view).
DROP VIEW IF EXISTS arrow_text_shared;
