-- join: gateway-engine candidates by a shared id: the gateway's id is the decode rid (LiteLLM) or the prefill rid (a router passing its id as rid).
CREATE OR REPLACE TEMP TABLE join_gid AS
SELECT g.record_id AS g_id, u.u_id
FROM join_rec g JOIN join_units u ON u.d_rid = g.rid
WHERE g.role = 'gateway' AND g.dup_of IS NULL
UNION
SELECT g.record_id AS g_id, u.u_id
FROM join_rec g JOIN join_units u ON u.p_rid = g.rid
WHERE g.role = 'gateway' AND g.dup_of IS NULL;
