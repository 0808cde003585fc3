-- Every row whose request_id is shared by another row (a conflict: same id, other values), with the file and line it came from.
SELECT r.request_id, r.row_id, f.path, r.line, r.tenant_id, rfc3339(r.ts) AS ts, r.model, r.prompt_tokens
FROM requests AS r
JOIN ingest_files AS f USING (file_id)
WHERE r.request_id IN (SELECT request_id FROM requests GROUP BY request_id HAVING count(*) > 1)
ORDER BY r.request_id, r.row_id;
