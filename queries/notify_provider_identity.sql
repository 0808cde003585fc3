-- notify: the provider's own name, addresses, incident id and title, as the last draft recorded them (words every notice writes).
SELECT value FROM notice_identities WHERE tenant_id IS NULL ORDER BY value;
