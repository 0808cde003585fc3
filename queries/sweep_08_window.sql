-- sweep: per model, the first and last response with a strong match and how many: the window the sweep suggests.
SELECT r.model, min(r.ts) AS first_ts, max(r.ts) AS last_ts,
       count(DISTINCT m.response_row_id) AS leaking_responses, count(*) AS pairs
FROM sweep_matches m JOIN requests r ON r.row_id = m.response_row_id
GROUP BY r.model
ORDER BY r.model;
