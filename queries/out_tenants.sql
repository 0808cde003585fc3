-- tenants.csv: each recipient or cross-tenant source tenant with its role and strongest tier, sorted by tenant_id.
SELECT tenant_id, role, strongest_tier, affected_requests, exposed_requests,
       rfc3339(first_ts) AS first_ts, rfc3339(last_ts) AS last_ts
FROM tenants
ORDER BY tenant_id;
