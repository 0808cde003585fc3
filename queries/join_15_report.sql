-- join: the join's counts by source, layout, role, outcome and reason, each record counted once.
-- A record's outcome is its worst part: ambiguous (a candidate it could
-- not be told apart from another: reported, never guessed), else unmatched
-- (a partner missing; the reasons say which), else matched (reason: how
-- the gateway and the engine side were joined). A record that repeats
-- another counts with that record's outcome, reason 'duplicate'.
INSERT INTO join_report
WITH paired AS (
    SELECT p_id AS id FROM join_units WHERE p_id IS NOT NULL AND d_id IS NOT NULL
    UNION ALL SELECT d_id FROM join_units WHERE p_id IS NOT NULL AND d_id IS NOT NULL
), room_cand AS (
    SELECT p_id AS id FROM join_pd UNION ALL SELECT d_id FROM join_pd
), id_cand AS (
    SELECT g_id AS id FROM join_gid
    UNION ALL SELECT p_id FROM join_gid i JOIN join_units u ON u.u_id = i.u_id WHERE p_id IS NOT NULL
    UNION ALL SELECT d_id FROM join_gid i JOIN join_units u ON u.u_id = i.u_id WHERE d_id IS NOT NULL
), time_cand AS (
    SELECT g_id AS id, kind FROM join_gtime
    UNION ALL SELECT p_id, kind FROM join_gtime i JOIN join_units u ON u.u_id = i.u_id WHERE p_id IS NOT NULL
    UNION ALL SELECT d_id, kind FROM join_gtime i JOIN join_units u ON u.u_id = i.u_id WHERE d_id IS NOT NULL
), flags AS (
    -- one pass instead of a membership test per CASE branch (a million records at scale)
    SELECT id, bool_or(k = 1) AS paired, bool_or(k = 2) AS room_cand, bool_or(k = 3) AS id_cand,
           bool_or(k = 4) AS time_cand, bool_or(k = 5) AS fail_cand
    FROM (SELECT id, 1 AS k FROM paired UNION ALL SELECT id, 2 FROM room_cand
          UNION ALL SELECT id, 3 FROM id_cand
          UNION ALL SELECT id, CASE kind WHEN 'failure' THEN 5 ELSE 4 END FROM time_cand)
    GROUP BY id
), rec_call AS (
    SELECT g_id AS id, row_id, how FROM join_calls WHERE g_id IS NOT NULL
    UNION ALL SELECT p_id, row_id, how FROM join_calls WHERE p_id IS NOT NULL
    UNION ALL SELECT d_id, row_id, how FROM join_calls WHERE d_id IS NOT NULL
), parts AS (
    SELECT r.record_id, r.source, r.layout, r.role,
           CASE WHEN r.role NOT IN ('prefill', 'decode') OR coalesce(f.paired, false) THEN NULL
                WHEN coalesce(f.room_cand, false) THEN 'ambiguous'
                ELSE 'unmatched' END AS room_outcome,
           CASE WHEN r.role NOT IN ('prefill', 'decode') OR coalesce(f.paired, false) THEN NULL
                WHEN coalesce(f.room_cand, false) THEN 'bootstrap_room repeated within ' || (SELECT room_label FROM join_params)
                WHEN r.bootstrap_room IS NULL THEN 'no bootstrap_room'
                WHEN r.role = 'decode' THEN 'no prefill record'
                ELSE 'no decode record' END AS room_reason,
           CASE WHEN c.how IS NOT NULL THEN NULL
                WHEN coalesce(f.id_cand, false) OR coalesce(f.time_cand, false) OR coalesce(f.fail_cand, false) THEN 'ambiguous'
                ELSE 'unmatched' END AS gw_outcome,
           CASE WHEN c.how IS NOT NULL THEN NULL
                WHEN coalesce(f.id_cand, false) THEN 'id shared by several records'
                WHEN coalesce(f.time_cand, false) AND r.role = 'gateway'
                    THEN 'no unique engine record within ' || (SELECT gateway_label FROM join_params) || ' of equal sizes'
                WHEN coalesce(f.time_cand, false)
                    THEN 'no unique gateway record within ' || (SELECT gateway_label FROM join_params) || ' of equal sizes'
                WHEN coalesce(f.fail_cand, false) AND r.role = 'gateway'
                    THEN 'no unique aborted engine record within ' || (SELECT gateway_label FROM join_params) || ' of a failure logged without sizes'
                WHEN coalesce(f.fail_cand, false)
                    THEN 'no unique failed gateway record without sizes within ' || (SELECT gateway_label FROM join_params)
                WHEN r.role = 'gateway' THEN 'no engine record'
                ELSE 'no gateway record' END AS gw_reason,
           c.how,
           j.row_id IS NOT NULL AS made
    FROM join_rec r
    LEFT JOIN rec_call c ON c.id = r.record_id
    LEFT JOIN flags f ON f.id = r.record_id
    LEFT JOIN joined_requests j ON j.row_id = c.row_id
    WHERE r.dup_of IS NULL
), outcomes AS (
    SELECT record_id, source, layout, role,
           CASE WHEN NOT made THEN 'unmatched'
                WHEN room_outcome = 'ambiguous' OR gw_outcome = 'ambiguous' THEN 'ambiguous'
                WHEN room_outcome IS NOT NULL OR gw_outcome IS NOT NULL THEN 'unmatched'
                ELSE 'matched' END AS outcome,
           CASE WHEN NOT made THEN 'no time: not a request'
                WHEN room_outcome = 'ambiguous' THEN room_reason
                WHEN gw_outcome = 'ambiguous' THEN gw_reason
                WHEN room_outcome IS NOT NULL OR gw_outcome IS NOT NULL THEN concat_ws('; ', room_reason, gw_reason)
                ELSE how END AS reason
    FROM parts
), everything AS (
    SELECT source, layout, role, outcome, reason FROM outcomes
    UNION ALL
    SELECT r.source, r.layout, r.role, o.outcome, 'duplicate'
    FROM join_rec r JOIN outcomes o ON o.record_id = r.dup_of
)
SELECT source, layout, role, outcome, reason, count(*) AS records
FROM everything
GROUP BY ALL
ORDER BY source, layout, role, outcome, reason;
