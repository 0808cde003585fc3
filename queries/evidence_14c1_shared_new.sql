-- evidence: the shared shingles (text_shared) whose tenants were not counted before with these fingerprints (text_common_memo).
CREATE OR REPLACE TEMP TABLE text_shared_new AS
SELECT DISTINCT s.model, s.hash FROM text_shared s
ANTI JOIN text_common_memo m ON m.model = s.model AND m.hash = s.hash;
