-- Row counts of the case database's main tables, for summaries.
SELECT
    (SELECT count(*) FROM ingest_files)      AS files,
    (SELECT count(*) FROM requests)          AS requests,
    (SELECT count(*) FROM rejected_rows)     AS rejected_rows,
    (SELECT count(*) FROM affected_requests) AS affected_requests,
    (SELECT count(*) FROM exposures)         AS exposures,
    (SELECT count(*) FROM tenants)           AS tenants;
