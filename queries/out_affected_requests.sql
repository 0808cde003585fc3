-- affected_requests.csv: the trigger requests, sorted by ts then request_id (DESIGN.md Outputs); evidence last.
SELECT a.request_id, a.tenant_id, rfc3339(a.ts) AS ts, a.model, a.prompt_tokens, a.capacity_tokens,
       coalesce(a.prefill_instance, '') AS prefill_instance,
       coalesce(a.decode_instance, '') AS decode_instance,
       a.unknown_slots,
       coalesce(c.evidence, '') AS evidence
FROM affected_requests a
LEFT JOIN trigger_checks c ON c.row_id = a.row_id
ORDER BY a.ts, a.request_id, a.row_id;
