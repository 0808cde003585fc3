-- evidence: number the (model, tenant_id) pairs of requests not numbered yet (text_tenant_models), after those numbered before, in (model, tenant_id) order: each fingerprint carries its row's number.
INSERT INTO text_tenant_models
SELECT (SELECT coalesce(max(tm), 0) FROM text_tenant_models) + row_number() OVER (ORDER BY model, tenant_id),
       model, tenant_id
FROM (SELECT DISTINCT model, tenant_id FROM requests) n
ANTI JOIN text_tenant_models m ON m.model = n.model AND m.tenant_id = n.tenant_id;
