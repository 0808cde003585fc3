-- notify: every tenant id and request id the analysis knows, and the directory's ids, names and addresses the last draft recorded, with their owner, into a temp table read back in pieces (notify_identifiers_2_piece) for the isolation manifest.
CREATE OR REPLACE TEMP TABLE notify_identifiers AS
SELECT DISTINCT tenant_id, kind, value FROM (
    SELECT tenant_id, 'tenant_id' AS kind, tenant_id AS value FROM tenants
    UNION ALL SELECT tenant_id, 'tenant_id', tenant_id FROM affected_requests
    UNION ALL SELECT source_tenant_id, 'tenant_id', source_tenant_id FROM exposures
    UNION ALL SELECT recipient_tenant_id, 'tenant_id', recipient_tenant_id FROM exposures
    UNION ALL SELECT tenant_id, 'request_id', request_id FROM affected_requests
    UNION ALL SELECT source_tenant_id, 'request_id', source_request_id FROM exposures
    UNION ALL SELECT recipient_tenant_id, 'request_id', trigger_request_id FROM exposures
    UNION ALL SELECT tenant_id, kind, value FROM notice_identities WHERE tenant_id IS NOT NULL
)
ORDER BY tenant_id, kind, value;
