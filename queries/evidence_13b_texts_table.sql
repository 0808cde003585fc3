-- evidence: the logged texts of every candidate pair's rows, read from requests once (responses with their response text; sources' prompts): each chunk reads its own from this table, not from every request again.
-- A join on the pairs' row_ids, not "row_id IN (...) OR row_id IN (...)":
-- DuckDB filters the scan of requests with the join's keys and decodes
-- the texts of those rows only (the two mark joins read every request's
-- texts: 20 s of CPU at 100M requests).
CREATE OR REPLACE TEMP TABLE text_pair_texts AS
WITH ids AS (
    SELECT row_id, bool_or(response) AS response
    FROM (SELECT response_row_id AS row_id, true AS response FROM text_candidates
          UNION ALL
          SELECT source_row_id, false FROM text_candidates)
    GROUP BY row_id
)
SELECT r.row_id,
       r.prompt_text,
       CASE WHEN ids.response THEN r.response_text END AS response_text,
       r.model
FROM requests r
JOIN ids ON ids.row_id = r.row_id;
