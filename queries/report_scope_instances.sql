-- Report: the prefill instances that served the in-scope models ($1), whose capacity lines the prompt-length chart draws.
-- args: ['glm-5.3']
SELECT DISTINCT prefill_instance
FROM requests
WHERE list_contains(CAST($1 AS VARCHAR[]), model) AND prefill_instance IS NOT NULL
ORDER BY prefill_instance;
