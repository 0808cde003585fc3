-- join: every source record once, with the lower record_id it duplicates (dup_of; NULL for the copy kept).
-- A gateway record with an id is the same call when id, tenant, model,
-- sizes and status agree (a row shipped twice, a page exported twice); an
-- engine record when its values agree (row_hash and the join's own fields).
CREATE OR REPLACE TEMP TABLE join_rec AS
SELECT * EXCLUDE (first_id), CASE WHEN first_id <> record_id THEN first_id END AS dup_of
FROM (
    SELECT record_id, source, layout, role, rid, bootstrap_room, instance, ts, end_ts, tenant_id, model,
           prompt_tokens, completion_tokens, status, finish_type, finish_message, prompt_text, response_text,
           file_id, line,
           min(record_id) OVER (PARTITION BY role, rid, prompt_tokens, completion_tokens,
               CASE WHEN role = 'gateway' AND rid IS NOT NULL THEN hash(tenant_id, model, status)
                    ELSE hash(row_hash, instance, ts, end_ts, bootstrap_room, tenant_id, model, status, finish_type) END) AS first_id
    FROM source_records
);
