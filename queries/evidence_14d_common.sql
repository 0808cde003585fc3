-- evidence: the shared shingles (text_shared, where chunks may repeat one) that the prompts of at least common_tenants distinct tenants of the model hold, counted shingle by shingle on every prompt shingle of the case: they carry no weight.
SELECT s.model, s.hash
FROM (SELECT DISTINCT model, hash FROM text_shared) s
JOIN (
    SELECT p.hash, r.model, r.tenant_id
    FROM text_prompt_shingles p
    SEMI JOIN (SELECT DISTINCT hash FROM text_shared) x ON x.hash = p.hash
    JOIN requests r ON r.row_id = p.row_id
) h ON h.hash = s.hash AND h.model = s.model
GROUP BY s.model, s.hash
HAVING count(DISTINCT h.tenant_id) >= (SELECT common_tenants FROM text_params)
ORDER BY s.model, s.hash;
