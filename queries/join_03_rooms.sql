-- join: prefill-decode candidates: the same bootstrap_room (and model, when both have one), start times at most room_us apart.
CREATE OR REPLACE TEMP TABLE join_pd AS
SELECT p.record_id AS p_id, d.record_id AS d_id
FROM join_rec p
JOIN join_rec d ON d.bootstrap_room = p.bootstrap_room
WHERE p.role = 'prefill' AND d.role = 'decode' AND p.dup_of IS NULL AND d.dup_of IS NULL
  AND abs(epoch_us(d.ts) - epoch_us(p.ts)) <= (SELECT room_us FROM join_params)
  AND (p.model IS NULL OR d.model IS NULL OR p.model = d.model);
