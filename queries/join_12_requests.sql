-- join: write one canonical request per call (DESIGN.md "Real logs": which source gives which field).
-- request_id: the gateway's id, else the decode rid, else the prefill rid.
-- tenant and texts: the gateway's (an engine field the source names, else
-- '' : unattributed). model: the engine source's, else the gateway's.
-- prompt_tokens: the size the customer sent (gateway), else the decode's
-- (also when the gateway logged 0: a failure it recorded without sizes).
-- ts, end_ts: the decode pool's own clock, else the gateway's. status: the
-- gateway's (what the customer got); with none, a normal finish is 200, an
-- abort its status_code (500 when it has none), no finished event unknown.
-- A call with no time anywhere cannot be a request (counted in join_report).
INSERT INTO requests
WITH texts AS (
    SELECT record_id, role, prompt_text, response_text FROM source_records
    WHERE prompt_text IS NOT NULL OR response_text IS NOT NULL
)
SELECT * EXCLUDE (file_id, line), hash(request_id, ts, end_ts, tenant_id, model, prompt_tokens, completion_tokens, status,
               prefill_instance, decode_instance, prompt_text, response_text) AS row_hash,
       file_id, line
FROM (
    SELECT c.row_id,
           coalesce(g.rid, d.rid, p.rid, 'record-' || c.row_id) AS request_id,
           coalesce(d.ts, g.ts, p.ts) AS ts,
           CASE WHEN d.record_id IS NOT NULL THEN d.end_ts
                WHEN g.record_id IS NOT NULL THEN g.end_ts ELSE p.end_ts END AS end_ts,
           coalesce(g.tenant_id, d.tenant_id, p.tenant_id, '') AS tenant_id,
           coalesce(d.model, p.model, g.model, '') AS model,
           coalesce(nullif(g.prompt_tokens, 0), d.prompt_tokens, p.prompt_tokens, g.prompt_tokens, 0) AS prompt_tokens,
           coalesce(d.completion_tokens, g.completion_tokens, p.completion_tokens) AS completion_tokens,
           CASE WHEN g.record_id IS NOT NULL THEN g.status
                WHEN d.record_id IS NOT NULL THEN
                    CASE WHEN d.finish_type IS NULL THEN NULL WHEN d.finish_type = 'abort' THEN coalesce(d.status, 500) ELSE 200 END
                ELSE CASE WHEN p.finish_type IS NULL THEN NULL WHEN p.finish_type = 'abort' THEN coalesce(p.status, 500) ELSE 200 END END AS status,
           CASE WHEN d.role = 'engine' THEN d.instance ELSE p.instance END AS prefill_instance,
           d.instance AS decode_instance,
           coalesce(gt.prompt_text, dt.prompt_text, pt.prompt_text) AS prompt_text,
           coalesce(gt.response_text, dt.response_text) AS response_text,
           coalesce(g.file_id, d.file_id, p.file_id) AS file_id,
           coalesce(g.line, d.line, p.line) AS line
    FROM join_calls c
    -- each side from its own role's records (g_id is always a gateway
    -- record, d_id a decode or engine one, p_id a prefill one): a hash
    -- table of every record per side was the join's peak at scale
    LEFT JOIN (SELECT * FROM join_rec WHERE role = 'gateway') g ON g.record_id = c.g_id
    LEFT JOIN (SELECT * FROM join_rec WHERE role IN ('decode', 'engine')) d ON d.record_id = c.d_id
    LEFT JOIN (SELECT * FROM join_rec WHERE role = 'prefill') p ON p.record_id = c.p_id
    -- each side's texts only: one hash table of every text per side was
    -- most of the join's memory at scale (the gateway holds the texts)
    LEFT JOIN (SELECT * FROM texts WHERE role = 'gateway') gt ON gt.record_id = c.g_id
    LEFT JOIN (SELECT * FROM texts WHERE role IN ('decode', 'engine')) dt ON dt.record_id = c.d_id
    LEFT JOIN (SELECT * FROM texts WHERE role = 'prefill') pt ON pt.record_id = c.p_id
)
WHERE ts IS NOT NULL;
