-- affected_requests.csv: the trigger requests, sorted by ts then request_id (DESIGN.md Outputs).
SELECT request_id, tenant_id, rfc3339(ts) AS ts, model, prompt_tokens, capacity_tokens,
       coalesce(prefill_instance, '') AS prefill_instance,
       coalesce(decode_instance, '') AS decode_instance,
       unknown_slots
FROM affected_requests
ORDER BY affected_requests.ts, request_id, row_id;
