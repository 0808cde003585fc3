-- evidence: the logged prompts of the pending rows with row_id in [$1, $2), with the number of their (model, tenant_id) (evidence_02c numbers every pair first), streamed to Go (the text never leaves the hashing). The range filters both sides: DuckDB does not carry it across the semi-join, and every range would otherwise probe with every pending row (quadratic: 450 ranges of 45M at 100M requests).
-- args: 0, 100
SELECT r.row_id, r.row_hash, r.prompt_text, m.tm
FROM requests r
SEMI JOIN (SELECT row_id FROM text_pending WHERE row_id >= $1 AND row_id < $2) p ON p.row_id = r.row_id
LEFT JOIN text_tenant_models m ON m.model = r.model AND m.tenant_id = r.tenant_id
WHERE r.row_id >= $1 AND r.row_id < $2;
