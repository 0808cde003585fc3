-- join: which source records make each joined request, duplicates included (a duplicate belongs to the request of the record it repeats).
INSERT INTO request_sources
WITH parts AS (
    SELECT row_id, g_id AS record_id FROM join_calls WHERE g_id IS NOT NULL
    UNION ALL SELECT row_id, p_id FROM join_calls WHERE p_id IS NOT NULL
    UNION ALL SELECT row_id, d_id FROM join_calls WHERE d_id IS NOT NULL
), made AS (
    SELECT x.* FROM parts x WHERE x.row_id IN (SELECT row_id FROM joined_requests)
)
SELECT m.row_id, r.record_id, r.role FROM made m JOIN join_rec r ON r.record_id = m.record_id
UNION ALL
SELECT m.row_id, r.record_id, r.role FROM made m JOIN join_rec r ON r.dup_of = m.record_id
ORDER BY 1, 2;
