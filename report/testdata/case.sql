-- A small realistic case for the report tests: five days of requests from
-- eight tenants on two prefill and two decode instances, triggers above the
-- prefill pool inside the window, exposures of every tier with one
-- self-exposure, rejected rows, notices and a send ledger. Logged text holds
-- marker strings that must never reach an output.
INSERT INTO ingest_files VALUES
  (1, 'logs/requests-2026-08-31.jsonl.gz', 'requests-2026-08-31.jsonl.gz', 48211, 'a3f1c9d2e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a201', 'jsonl', 'gzip', 'canonical', 205, 200, 3, 2, false, TIMESTAMPTZ '2026-09-10T08:00:00Z'),
  (2, 'logs/requests-2026-09-03.csv', 'requests-2026-09-03.csv', 39005, 'b4e2d0c1f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b302', 'csv', 'none', 'canonical', 203, 200, 2, 1, false, TIMESTAMPTZ '2026-09-10T08:00:05Z'),
  (3, 'logs/requests-rotated.jsonl', 'requests-rotated.jsonl', 0, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'empty', 'none', 'canonical', 0, 0, 0, 0, false, TIMESTAMPTZ '2026-09-10T08:00:06Z');

-- 400 requests, one every 18 minutes from 2026-08-31T00:00:00Z; every 37th
-- request to glm-5.3 is far above the 681,280-token pool.
INSERT INTO requests
SELECT i AS row_id,
       printf('req-%04d', i) AS request_id,
       TIMESTAMPTZ '2026-08-31T00:00:00Z' + i * INTERVAL 18 MINUTE AS ts,
       CASE WHEN i % 50 = 0 THEN NULL ELSE TIMESTAMPTZ '2026-08-31T00:00:00Z' + i * INTERVAL 18 MINUTE + INTERVAL 40 SECOND END AS end_ts,
       printf('t-%02d', 1 + (i * 7) % 8) AS tenant_id,
       CASE WHEN i % 5 = 4 THEN 'other-model' ELSE 'glm-5.3' END AS model,
       CASE WHEN i % 37 = 0 THEN 700000 + (i * 3001) % 340000
            ELSE CAST(pow(10, 1 + ((i * 7919) % 1000) / 1000.0 * 4.6) AS BIGINT) END AS prompt_tokens,
       20 + i % 300 AS completion_tokens,
       CASE WHEN i % 41 = 0 THEN 429 ELSE 200 END AS status,
       CASE WHEN i % 2 = 0 THEN 'prefill-a' ELSE 'prefill-b' END AS prefill_instance,
       CASE WHEN i % 23 = 0 OR i = 333 THEN NULL WHEN i % 3 = 0 THEN 'decode-1' ELSE 'decode-2' END AS decode_instance,
       'MARKER-PROMPT-' || i || ' secret words of tenant' AS prompt_text,
       'MARKER-RESPONSE-' || i AS response_text,
       i * 1000003 AS row_hash,
       CASE WHEN i < 200 THEN 1 ELSE 2 END AS file_id,
       CASE WHEN i < 200 THEN i + 1 ELSE i - 199 END AS line
FROM range(0, 400) r(i);

INSERT INTO rejected_rows VALUES
  (1, 17, 'ts: not a timestamp', '{"request_id":"req-x1","ts":"MARKER-RAW-1","prompt_text":"MARKER-PROMPT-RAW"}'),
  (1, 88, 'line truncated: unexpected end of JSON input', '{"request_id":"req-x2","prompt_text":"MARKER-RAW-2'),
  (1, 150, 'prompt_tokens: missing', '{"request_id":"req-x3","response_text":"MARKER-RAW-3"}'),
  (2, 4, 'prompt_tokens: not an integer', 'req-x4,2026-09-03T00:00:00Z,MARKER-RAW-4'),
  (2, 90, 'tenant_id: missing', 'req-x5,2026-09-03T01:00:00Z,,MARKER-RAW-5');

-- The triggers: served glm-5.3 requests in the window [2026-09-01, 2026-09-04T12:00) above the pool.
INSERT INTO affected_requests
SELECT request_id, row_id, tenant_id, ts, end_ts, model, prompt_tokens, completion_tokens,
       681280 AS capacity_tokens, prefill_instance, decode_instance,
       CASE WHEN decode_instance IS NULL THEN NULL ELSE row_id % 7 END AS unknown_slots
FROM requests
WHERE model = 'glm-5.3' AND ts >= TIMESTAMPTZ '2026-09-01T00:00:00Z' AND ts < TIMESTAMPTZ '2026-09-04T12:00:00Z'
  AND coalesce(status, 200) BETWEEN 200 AND 299 AND prompt_tokens > 681280;

-- Sources: the three requests before each trigger; the tier follows the distance.
INSERT INTO exposures
SELECT s.request_id, a.request_id, s.row_id, a.row_id, s.tenant_id, a.tenant_id, s.ts, a.ts,
       CASE a.row_id - s.row_id WHEN 1 THEN 'confirmed' WHEN 2 THEN 'probable' ELSE 'possible' END,
       a.row_id - s.row_id,
       s.tenant_id = a.tenant_id,
       CASE a.row_id - s.row_id WHEN 1 THEN 'shingles=4 instance=' || coalesce(a.decode_instance, '?')
            WHEN 2 THEN 'slots=' || (1000 + s.row_id) ELSE 'lookback=10m' END
FROM affected_requests a JOIN requests s ON s.row_id BETWEEN a.row_id - 3 AND a.row_id - 1;
-- One self-exposure: the trigger's own tenant, earlier the same day.
INSERT INTO exposures
SELECT s.request_id, a.request_id, s.row_id, a.row_id, s.tenant_id, a.tenant_id, s.ts, a.ts,
       'probable', 2, true, 'slots=64'
FROM affected_requests a JOIN requests s ON s.row_id = a.row_id - 8
WHERE a.row_id = (SELECT min(row_id) FROM affected_requests);

INSERT INTO tenants
WITH rec AS (
    SELECT tenant_id, count(*) AS n, min(ts) AS f, max(ts) AS l FROM affected_requests GROUP BY ALL
), src AS (
    SELECT source_tenant_id AS tenant_id, count(DISTINCT source_row_id) AS n, min(tier_rank) AS r,
           min(source_ts) AS f, max(source_ts) AS l
    FROM exposures WHERE NOT self_exposure GROUP BY ALL
), rec_tier AS (
    SELECT recipient_tenant_id AS tenant_id, min(tier_rank) AS r FROM exposures GROUP BY ALL
)
SELECT coalesce(rec.tenant_id, src.tenant_id),
       CASE WHEN rec.tenant_id IS NOT NULL AND src.tenant_id IS NOT NULL THEN 'both'
            WHEN rec.tenant_id IS NOT NULL THEN 'recipient' ELSE 'source' END,
       ['confirmed', 'probable', 'possible'][least(coalesce(src.r, 9), coalesce(rec_tier.r, 9))],
       coalesce(rec.n, 0), coalesce(src.n, 0),
       least(rec.f, src.f), greatest(rec.l, src.l)
FROM rec FULL JOIN src USING (tenant_id) LEFT JOIN rec_tier USING (tenant_id);

INSERT INTO analysis_runs VALUES ('WAI-TEST-0901', 'replay', 'sorted', 1, 380, 2, (SELECT count(*) FROM affected_requests), (SELECT count(*) FROM exposures), TIMESTAMPTZ '2026-09-10T08:30:00Z');

INSERT INTO notices (notice_id, kind, tenant_id, roles, language, recipients, message_id, file, status, reason, drafted_at) VALUES
  ('WAI-TEST-0901/tenant/t-01', 'tenant', 't-01', 'both', 'en', 'sec@t01.example', '<n1@leakmap>', 'tenant-t-01.eml', 'ready', '', TIMESTAMPTZ '2026-09-10T08:40:00Z'),
  ('WAI-TEST-0901/tenant/t-02', 'tenant', 't-02', 'source', 'fr', 'dpo@t02.example', '<n2@leakmap>', 'tenant-t-02.eml', 'ready', '', TIMESTAMPTZ '2026-09-10T08:40:00Z'),
  ('WAI-TEST-0901/tenant/t-03', 'tenant', 't-03', 'recipient', 'en', '', '<n3@leakmap>', 'tenant-t-03.eml', 'cannot_notify', 'no address in the tenant directory', TIMESTAMPTZ '2026-09-10T08:40:00Z'),
  ('WAI-TEST-0901/regulator', 'regulator', NULL, 'regulator', 'en', 'breach@cnil.example', '<n0@leakmap>', 'regulator.eml', 'ready', '', TIMESTAMPTZ '2026-09-10T08:40:00Z');
INSERT INTO send_ledger (notice_id, recipient, message_id, status, attempts, server_reply, attempted_at) VALUES
  ('WAI-TEST-0901/tenant/t-01', 'sec@t01.example', '<n1@leakmap>', 'failed', 1, '451 try later', TIMESTAMPTZ '2026-09-10T08:50:00Z'),
  ('WAI-TEST-0901/tenant/t-01', 'sec@t01.example', '<n1@leakmap>', 'accepted', 2, '250 ok', TIMESTAMPTZ '2026-09-10T08:55:00Z'),
  ('WAI-TEST-0901/tenant/t-02', 'dpo@t02.example', '<n2@leakmap>', 'accepted', 1, '250 ok', TIMESTAMPTZ '2026-09-10T08:51:00Z'),
  ('WAI-TEST-0901/regulator', 'breach@cnil.example', '<n0@leakmap>', 'accepted', 1, '250 ok', TIMESTAMPTZ '2026-09-10T08:49:00Z');

-- The join's counts, as a case loaded from real-layout logs has them.
INSERT INTO join_report VALUES
  ('sources[0]', 'litellm-spendlogs', 'gateway', 'matched', 'by shared id', 370),
  ('sources[0]', 'litellm-spendlogs', 'gateway', 'unmatched', 'no engine record', 12),
  ('sources[2]', 'sglang', 'decode', 'ambiguous', 'bootstrap_room repeated within 30s', 2);
