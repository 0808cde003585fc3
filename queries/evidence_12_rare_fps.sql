-- evidence: the response fingerprints that can carry weight: held by the prompts of fewer than common_tenants tenants of the model, and not by the response's own prompt.
CREATE OR REPLACE TEMP TABLE text_rare_fps AS
SELECT r.*
FROM text_resp_fps r
LEFT JOIN text_spec s ON s.model = r.model AND s.hash = r.hash
WHERE coalesce(s.tenants, 0) < (SELECT common_tenants FROM text_params)
  AND NOT EXISTS (SELECT 1 FROM text_fingerprints o
                  WHERE o.row_id = r.row_id AND o.kind = 0 AND o.hash = r.hash);
