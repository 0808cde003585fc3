-- join: the join report by role, outcome and reason, for the summary line after ingest.
SELECT role, outcome, reason, records
FROM (SELECT role, outcome, reason, sum(records)::BIGINT AS records FROM join_report GROUP BY ALL)
ORDER BY CASE role WHEN 'gateway' THEN 1 WHEN 'prefill' THEN 2 WHEN 'decode' THEN 3 ELSE 4 END, role,
         CASE outcome WHEN 'matched' THEN 1 WHEN 'unmatched' THEN 2 ELSE 3 END, records DESC, reason;
