-- evidence: the tenants whose prompts with row_id in [$1, $2) hold a fingerprint of a response of the same model, each (model, hash, tenant) once per range.
-- args: 0, 100
-- A range of rows at a time, filtering both sides: requests and the
-- fingerprints are stored in row_id order, so each range reads its own row
-- groups and its join builds on a range of requests, which fits in memory.
-- One join of every fingerprint held by a response (219M at 100M requests)
-- with every request spilled 4.5 GB and took most of a 79-s step.
INSERT INTO text_spec_parts
SELECT DISTINCT r.model, f.hash, r.tenant_id
FROM text_fingerprints f
JOIN requests r ON r.row_id = f.row_id
SEMI JOIN text_spec_keys k ON k.hash = f.hash AND k.model = r.model
WHERE f.kind = 0
  AND f.row_id >= $1 AND f.row_id < $2
  AND r.row_id >= $1 AND r.row_id < $2;
