-- join: every source record once, with the lower record_id it duplicates (dup_of; NULL for the copy kept).
-- A gateway record with an id is the same call when id, tenant, model,
-- sizes and status agree (a row shipped twice, a page exported twice); an
-- engine record when its values agree (row_hash and the join's own fields).
-- An engine request whose received and finished events fell into two of a
-- host's parts (the hourly file rotated between them) is read as two
-- records of one rid on one host: one with only its start, one with the
-- finish (its start derived from the latency). They are one record: the
-- finished half, with the received half's start; the received half counts
-- as its duplicate.
-- The logged texts stay in source_records (join_12 reads them there): a
-- copy of every text is the costly part of this table at scale.
CREATE OR REPLACE TEMP TABLE join_rec AS
WITH halves AS (
    SELECT f.record_id AS f_id, r.record_id AS r_id, r.ts AS r_ts
    FROM source_records f
    JOIN source_records r ON r.source = f.source AND r.role = f.role AND r.rid = f.rid
         AND r.instance IS NOT DISTINCT FROM f.instance AND r.file_id <> f.file_id
    WHERE f.role <> 'gateway' AND f.end_ts IS NOT NULL
      AND r.end_ts IS NULL AND r.finish_type IS NULL AND r.ts IS NOT NULL AND r.ts <= f.end_ts
    QUALIFY count(*) OVER (PARTITION BY f.record_id) = 1 AND count(*) OVER (PARTITION BY r.record_id) = 1
), recs AS (
    SELECT s.* EXCLUDE (prompt_text, response_text) REPLACE (coalesce(h.r_ts, s.ts) AS ts), hr.f_id AS half_of
    FROM source_records s
    LEFT JOIN halves h ON h.f_id = s.record_id
    LEFT JOIN halves hr ON hr.r_id = s.record_id
)
SELECT * EXCLUDE (first_id, half_of),
       CASE WHEN half_of IS NOT NULL THEN half_of WHEN first_id <> record_id THEN first_id END AS dup_of
FROM (
    SELECT record_id, source, layout, role, rid, bootstrap_room, instance, ts, end_ts, tenant_id, model,
           prompt_tokens, completion_tokens, status, finish_type, finish_message,
           file_id, line, half_of,
           min(record_id) OVER (PARTITION BY role, rid, prompt_tokens, completion_tokens,
               CASE WHEN role = 'gateway' AND rid IS NOT NULL THEN hash(tenant_id, model, status)
                    ELSE hash(row_hash, instance, ts, end_ts, bootstrap_room, tenant_id, model, status, finish_type) END) AS first_id
    FROM recs
);
