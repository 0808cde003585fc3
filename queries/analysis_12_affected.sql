-- analysis: write the affected (trigger) requests, with the never-written slots the replay gave each (NULL when not replayed).
INSERT INTO affected_requests
SELECT t.request_id, t.row_id, t.tenant_id, t.ts, t.end_ts, t.model, t.prompt_tokens,
       t.completion_tokens, t.capacity_tokens, t.prefill_instance, t.decode_instance,
       s.unknown_slots
FROM analysis_triggers t
LEFT JOIN analysis_trigger_slots s ON s.trigger_row_id = t.row_id
ORDER BY t.ts, t.request_id, t.row_id;
