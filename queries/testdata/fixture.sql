-- Fixture data for the query test: a tiny case, enough for every query to
-- return rows. Each package appends its own section below; keep values small.
INSERT INTO ingest_files VALUES
  (1, 'logs/a.jsonl', 'a.jsonl', 1234, 'aa11', 'jsonl', 'none', 'canonical', 6, 4, 1, 1, false, TIMESTAMPTZ '2026-09-10T08:00:00Z');
INSERT INTO requests VALUES
  (1, 'r1', TIMESTAMPTZ '2026-09-01T10:00:00Z', TIMESTAMPTZ '2026-09-01T10:00:05Z', 't-alpha', 'glm-5.3', 4000, 100, 200, 'p1', 'd1', 'alpha secret prompt words here', 'ok', 11, 1, 1),
  (2, 'r2', TIMESTAMPTZ '2026-09-01T10:00:02Z', TIMESTAMPTZ '2026-09-01T10:00:04Z', 't-beta', 'glm-5.3', 3000, 50, 200, 'p1', 'd1', NULL, NULL, 12, 1, 2),
  (3, 'r3', TIMESTAMPTZ '2026-09-01T10:00:06Z', TIMESTAMPTZ '2026-09-01T10:00:09Z', 't-gamma', 'glm-5.3', 900000, 20, 200, 'p1', 'd1', NULL, 'alpha secret prompt words here', 13, 1, 3),
  (4, 'r4', TIMESTAMPTZ '2026-09-01T10:00:07Z', NULL, 't-beta', 'other', 2000000, 10, 429, 'p2', NULL, NULL, NULL, 14, 1, 5);
INSERT INTO rejected_rows VALUES (1, 4, 'ts: not a timestamp', '{"request_id":"r9","ts":"yesterday"}');
INSERT INTO affected_requests VALUES
  ('r3', 3, 't-gamma', TIMESTAMPTZ '2026-09-01T10:00:06Z', TIMESTAMPTZ '2026-09-01T10:00:09Z', 'glm-5.3', 900000, 20, 681280, 'p1', 'd1', 0);
INSERT INTO exposures VALUES
  ('r1', 'r3', 1, 3, 't-alpha', 't-gamma', TIMESTAMPTZ '2026-09-01T10:00:00Z', TIMESTAMPTZ '2026-09-01T10:00:06Z', 'confirmed', 1, false, 'shingles=3 instance=d1'),
  ('r2', 'r3', 2, 3, 't-beta', 't-gamma', TIMESTAMPTZ '2026-09-01T10:00:02Z', TIMESTAMPTZ '2026-09-01T10:00:06Z', 'probable', 2, false, 'slots=1200 instance=d1');
INSERT INTO tenants VALUES
  ('t-alpha', 'source', 'confirmed', 0, 1, TIMESTAMPTZ '2026-09-01T10:00:00Z', TIMESTAMPTZ '2026-09-01T10:00:00Z'),
  ('t-beta', 'source', 'probable', 0, 1, TIMESTAMPTZ '2026-09-01T10:00:02Z', TIMESTAMPTZ '2026-09-01T10:00:02Z'),
  ('t-gamma', 'recipient', 'confirmed', 1, 0, TIMESTAMPTZ '2026-09-01T10:00:06Z', TIMESTAMPTZ '2026-09-01T10:00:06Z');
INSERT INTO analysis_runs VALUES ('WAI-TEST', 'replay', 'sorted', 1, 3, 0, 1, 2, TIMESTAMPTZ '2026-09-10T09:00:00Z');
-- analysis: stand-ins for the Arrow views the analysis registers from Go
-- (replay slots, shared shingles, never-written slots per trigger).
-- Views, as the Arrow registration makes them (the drop queries drop views).
CREATE OR REPLACE TEMP VIEW arrow_analysis_pairs AS
SELECT * FROM (VALUES (2::BIGINT, 3::BIGINT, 1200::BIGINT)) v(source_row_id, trigger_row_id, slots);
-- evidence: stand-ins for the content match's Arrow views and for the temp
-- tables its later (by name) queries make, which analysis_* queries read.
INSERT INTO text_fingerprints VALUES (1, 42, 1), (2, 7, 2);
INSERT INTO text_tenant_models VALUES (1, 'glm-5.3', 't-alpha'), (2, 'glm-5.3', 't-beta');
INSERT INTO text_indexed VALUES (1, 11), (2, 12), (3, 13);
CREATE OR REPLACE TEMP VIEW arrow_ingest_rows AS
SELECT * FROM (VALUES ((99::BIGINT << 32) | 1, 'req-a', TIMESTAMPTZ '2026-09-01T10:00:00Z', NULL::TIMESTAMPTZ, 't', 'm', 5::BIGINT, NULL::BIGINT, 200, NULL, NULL, NULL, NULL, 1::BIGINT))
  v(row_id, request_id, ts, end_ts, tenant_id, model, prompt_tokens, completion_tokens, status, prefill_instance, decode_instance, prompt_text, response_text, line);
CREATE OR REPLACE TEMP VIEW arrow_text_prompt_hits AS
SELECT * FROM (VALUES (1::BIGINT, 42::BIGINT)) v(row_id, hash);
CREATE OR REPLACE TEMP VIEW arrow_text_shared AS
SELECT * FROM (VALUES ('glm-5.3', 42::BIGINT)) v(model, hash);
CREATE OR REPLACE TEMP VIEW arrow_text_fingerprints AS
SELECT * FROM (VALUES (9::BIGINT, 5::BIGINT, 1::INTEGER)) v(row_id, hash, tm);
CREATE OR REPLACE TEMP VIEW arrow_text_resp_hashes AS
SELECT * FROM (VALUES (3::BIGINT, 42::BIGINT), (3::BIGINT, 7::BIGINT)) v(row_id, hash);
CREATE OR REPLACE TEMP VIEW arrow_text_indexed AS
SELECT * FROM (VALUES (9::BIGINT, 99::UBIGINT)) v(row_id, row_hash);
CREATE OR REPLACE TEMP TABLE text_rare_fps AS
SELECT * FROM (VALUES (3::BIGINT, 42::BIGINT, 't-gamma', 'glm-5.3', TIMESTAMPTZ '2026-09-01T10:00:06Z')) v(row_id, hash, tenant_id, model, ts);
CREATE OR REPLACE TEMP TABLE text_matches AS
SELECT * FROM (VALUES (3::BIGINT, 1::BIGINT, 8::INTEGER, 12::INTEGER, 8::INTEGER, true)) v(response_row_id, source_row_id, shingles, run, rare, strong);
CREATE OR REPLACE TEMP VIEW arrow_text_matches AS
SELECT * FROM (VALUES (3::BIGINT, 1::BIGINT, 8::INTEGER, 12::INTEGER, 8::INTEGER, true)) v(response_row_id, source_row_id, shingles, run, rare, strong);
CREATE OR REPLACE TEMP VIEW arrow_analysis_trigger_slots AS
SELECT * FROM (VALUES (3::BIGINT, 0::BIGINT)) v(trigger_row_id, unknown_slots);
-- join: a gateway record (LiteLLM: its id is the decode rid), the cut
-- prefill and the decode record of one call, and a lone decode record.
INSERT INTO source_records VALUES
  ((7::BIGINT << 32) | 2, 'sources[0]', 'litellm-spendlogs', 'gateway', 'chatcmpl-d1', NULL, NULL, NULL, TIMESTAMPTZ '2026-09-01T10:00:06Z', TIMESTAMPTZ '2026-09-01T10:00:09Z', 't-gamma', 'glm-5.3', 900000, 20, NULL, 200, NULL, NULL, NULL, NULL, 21, 7, 2),
  ((8::BIGINT << 32) | 1, 'sources[1]', 'sglang', 'prefill', 'chatcmpl-p1', 51122093, NULL, 'p1', TIMESTAMPTZ '2026-09-01T10:00:06Z', TIMESTAMPTZ '2026-09-01T10:00:06Z', NULL, 'glm-5.3', 1, 1, 0, 400, 'abort', 'Input length (900000 tokens) exceeds the maximum allowed length (681279 tokens).', NULL, NULL, 22, 8, 1),
  ((9::BIGINT << 32) | 1, 'sources[2]', 'sglang', 'decode', 'chatcmpl-d1', 51122093, '10.0.3.7', 'd1', TIMESTAMPTZ '2026-09-01T10:00:06.2Z', TIMESTAMPTZ '2026-09-01T10:00:09Z', NULL, 'glm-5.3', 900000, 20, 0, NULL, 'stop', NULL, NULL, NULL, 23, 9, 1),
  ((9::BIGINT << 32) | 2, 'sources[2]', 'sglang', 'decode', 'chatcmpl-d2', 7, '10.0.3.7', 'd1', TIMESTAMPTZ '2026-09-01T10:00:10Z', TIMESTAMPTZ '2026-09-01T10:00:12Z', NULL, 'glm-5.3', 3000, 20, 0, NULL, 'stop', NULL, NULL, NULL, 24, 9, 2);
