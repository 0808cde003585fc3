-- evidence: per candidate response, the positions of its fingerprints held by the prompts of at least common_tenants tenants of the model (their text carries no weight).
SELECT r.row_id, r.pos
FROM text_resp_fps r
JOIN text_spec s ON s.model = r.model AND s.hash = r.hash
WHERE s.tenants >= (SELECT common_tenants FROM text_params)
  AND r.row_id IN (SELECT response_row_id FROM text_candidates)
ORDER BY r.row_id, r.pos;
