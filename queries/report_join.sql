-- Report join sheet: how the real-layout records became requests (join_report: per source, layout, role, outcome and reason), empty on a canonical case.
SELECT source, layout, role, outcome, reason, records
FROM join_report
ORDER BY source, layout, role, CASE outcome WHEN 'matched' THEN 1 WHEN 'unmatched' THEN 2 ELSE 3 END, reason;
