-- analysis: the logged prompts of served requests that could precede a trigger with a logged response, streamed for shingle hashing.
SELECT r.row_id, r.prompt_text
FROM requests r
WHERE r.prompt_text IS NOT NULL
  AND (r.status IS NULL OR r.status BETWEEN 200 AND 299)
  AND r.ts <= (SELECT max(t.ts) FROM analysis_triggers t JOIN requests q ON q.row_id = t.row_id
               WHERE q.response_text IS NOT NULL);
