-- trigger_disagreements.csv: the calls where the capacity test and the prefill's cut disagree, with why, sorted by ts then request_id.
SELECT request_id,
       CASE WHEN over_capacity THEN 'true' ELSE 'false' END AS over_capacity,
       CASE WHEN cut_at_prefill THEN 'true' ELSE 'false' END AS cut_at_prefill,
       disagreement AS reason
FROM trigger_checks
WHERE disagreement IS NOT NULL
ORDER BY ts, request_id, row_id;
