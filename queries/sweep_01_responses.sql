-- sweep: every logged response, of the models asked for (empty list: all), with ts in [since, until) when given.
-- args: ['glm-5.3'], NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ
INSERT INTO text_responses
SELECT row_id FROM requests
WHERE response_text IS NOT NULL
  AND (len($1::VARCHAR[]) = 0 OR list_contains($1::VARCHAR[], model))
  AND ($2::TIMESTAMPTZ IS NULL OR ts >= $2::TIMESTAMPTZ)
  AND ($3::TIMESTAMPTZ IS NULL OR ts < $3::TIMESTAMPTZ);
