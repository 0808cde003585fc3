-- notify: each drafted notice's file, owner and own numbers, to rebuild the isolation manifest from the case.
SELECT file, kind, tenant_id, own_numbers FROM notices ORDER BY file;
