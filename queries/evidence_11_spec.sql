-- evidence: how specific each response fingerprint is: the distinct tenants whose prompts of that model hold it, over the whole case, kept only when 2 or more (any common_tenants is at least 2: fewer carry weight alike); counted on the ranges' distinct tenants (text_spec_parts), not a full index.
CREATE OR REPLACE TEMP TABLE text_spec AS
SELECT model, hash, count(DISTINCT tenant_id) AS tenants
FROM text_spec_parts
GROUP BY ALL
HAVING count(DISTINCT tenant_id) >= 2;
