-- evidence: the rows whose logged prompts are not fingerprinted yet, in row_id order (a temp table the hashing reads in row_id ranges: each range's scan skips the others' row groups; a response is fingerprinted when it is compared, package textmatch).
CREATE OR REPLACE TEMP TABLE text_pending AS
SELECT r.row_id
FROM requests r
ANTI JOIN text_indexed t ON t.row_id = r.row_id
WHERE r.prompt_text IS NOT NULL
ORDER BY r.row_id;
