-- notify: the logged texts (prompts, responses) of every request the analysis names, into a temp table read back in pieces (notify_texts_2_piece) for the isolation manifest's shingle hashes; never printed.
CREATE OR REPLACE TEMP TABLE notify_texts AS
WITH ids AS (
    SELECT row_id FROM affected_requests
    UNION SELECT source_row_id FROM exposures
    UNION SELECT trigger_row_id FROM exposures
)
SELECT txt FROM (
    SELECT r.prompt_text AS txt FROM requests r JOIN ids USING (row_id)
    UNION ALL
    SELECT r.response_text FROM requests r JOIN ids USING (row_id)
)
WHERE txt IS NOT NULL AND txt <> '';
