-- join: per joined request, whether it held decode slots and whether its prefill record cut the prompt (the bug's fingerprint).
-- held_slots: from the decode record: a normal finish held its slots
-- whatever the gateway says, an abort did not; NULL (no decode record, or no
-- finished event): the status decides, as for a canonical row.
-- cut_at_prefill: the prefill record says prompt_tokens 1 or the abort
-- "exceeds the maximum allowed length", the gateway's (else the decode's)
-- size is above 1, and the call was served (status 2xx or none).
INSERT INTO joined_requests
SELECT c.row_id,
       CASE WHEN d.record_id IS NULL OR d.finish_type IS NULL THEN NULL
            ELSE d.finish_type <> 'abort' END,
       coalesce(p.record_id IS NOT NULL
                AND (p.prompt_tokens = 1 OR p.finish_message LIKE '%exceeds the maximum allowed length%')
                AND coalesce(g.prompt_tokens, d.prompt_tokens) > 1
                AND (q.status IS NULL OR q.status BETWEEN 200 AND 299), false)
FROM join_calls c
JOIN requests q ON q.row_id = c.row_id
LEFT JOIN (SELECT * FROM join_rec WHERE role = 'gateway') g ON g.record_id = c.g_id
LEFT JOIN (SELECT * FROM join_rec WHERE role IN ('decode', 'engine')) d ON d.record_id = c.d_id
LEFT JOIN (SELECT * FROM join_rec WHERE role = 'prefill') p ON p.record_id = c.p_id;
