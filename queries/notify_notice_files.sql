-- notify: each drafted notice's file and owner, to rebuild the isolation manifest from the case.
SELECT file, kind, tenant_id FROM notices ORDER BY file;
