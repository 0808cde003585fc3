-- evidence: count, shingle by shingle on every logged prompt (the hits found in them), the distinct tenants whose prompts of the model hold each new shared shingle (0 when none), into text_common_memo.
INSERT INTO text_common_memo
SELECT s.model, s.hash, count(DISTINCT h.tenant_id) AS tenants
FROM text_shared_new s
LEFT JOIN (
    SELECT p.hash, r.model, r.tenant_id
    FROM text_prompt_hits p
    JOIN requests r ON r.row_id = p.row_id
) h ON h.hash = s.hash AND h.model = s.model
GROUP BY s.model, s.hash;
