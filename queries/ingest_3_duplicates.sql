-- Candidate rows of file $1 equal, value for value, to an earlier row (an earlier file, or an earlier line of this file); times compare as UTC instants; the hash is never trusted alone. One pass: equal rows form one partition (NULLs equal), and every copy after the first in file order is a duplicate, so k copies of a row cost k, not k*k pairs.
-- args: 99
INSERT INTO ingest_dups
SELECT rid
FROM (
    SELECT rid, file_id, row_number() OVER (
        PARTITION BY request_id, row_hash, ts, end_ts, tenant_id, model, prompt_tokens, completion_tokens, status,
                     prefill_instance, decode_instance, prompt_text, response_text
        ORDER BY file_id, line, rid) AS copy
    FROM ingest_cand
)
WHERE copy > 1 AND file_id = $1;
