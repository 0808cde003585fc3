-- evidence: the logged prompts of the pending rows with row_id in [$1, $2), streamed to Go (the text never leaves the hashing). The range filters both sides: DuckDB does not carry it across the semi-join, and every range would otherwise probe with every pending row (quadratic: 450 ranges of 45M at 100M requests).
-- args: 0, 100
SELECT r.row_id, r.row_hash, r.prompt_text
FROM requests r
SEMI JOIN (SELECT row_id FROM text_pending WHERE row_id >= $1 AND row_id < $2) p ON p.row_id = r.row_id
WHERE r.row_id >= $1 AND r.row_id < $2;
