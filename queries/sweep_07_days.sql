-- sweep: per UTC day of the response and model: responses with logged text, those with a strong match, their distinct source and recipient tenants.
INSERT INTO sweep_days
WITH resp AS (
    SELECT r.row_id, r.tenant_id, r.model, CAST(timezone('UTC', r.ts) AS DATE) AS day
    FROM text_responses t JOIN requests r ON r.row_id = t.row_id
), leaks AS (
    SELECT m.response_row_id, s.tenant_id AS source_tenant
    FROM sweep_matches m JOIN requests s ON s.row_id = m.source_row_id
)
SELECT r.day, r.model, count(DISTINCT r.row_id),
       count(DISTINCT l.response_row_id),
       count(DISTINCT l.source_tenant),
       count(DISTINCT CASE WHEN l.response_row_id IS NOT NULL THEN r.tenant_id END)
FROM resp r LEFT JOIN leaks l ON l.response_row_id = r.row_id
GROUP BY ALL
ORDER BY r.day, r.model;
