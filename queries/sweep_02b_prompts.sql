-- sweep: how many served prompts with logged text, of the models asked for (empty list: all), the responses are compared with.
-- args: ['glm-5.3']
SELECT count(*) FROM requests
WHERE prompt_text IS NOT NULL
  AND (status IS NULL OR status BETWEEN 200 AND 299)
  AND (len($1::VARCHAR[]) = 0 OR list_contains($1::VARCHAR[], model));
