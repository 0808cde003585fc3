-- evidence: keep the counts just made (text_spec) in text_spec_memo, each (model, hash) once.
INSERT INTO text_spec_memo
SELECT s.model, s.hash, s.tenants FROM text_spec s
ANTI JOIN text_spec_memo m ON m.model = s.model AND m.hash = s.hash;
