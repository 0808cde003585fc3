-- evidence: the shared shingles (text_shared, where chunks may repeat one) that the prompts of at least common_tenants distinct tenants of the model hold (their counts in text_common_memo): they carry no weight.
SELECT m.model, m.hash
FROM text_common_memo m
SEMI JOIN text_shared s ON s.model = m.model AND s.hash = m.hash
WHERE m.tenants >= (SELECT common_tenants FROM text_params)
ORDER BY m.model, m.hash;
