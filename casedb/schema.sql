-- The case database schema: the contract between ingest, analysis, reports and notices.
-- Every statement is idempotent so Open can run it on any existing case.

-- Chain of custody: one row per input file ever offered to the case.
CREATE SEQUENCE IF NOT EXISTS ingest_file_seq START 1;
CREATE TABLE IF NOT EXISTS ingest_files (
    file_id        BIGINT PRIMARY KEY,
    path           VARCHAR NOT NULL,   -- as given on the command line, cleaned
    name           VARCHAR NOT NULL,   -- base name, for "same name, other hash" flags
    size_bytes     BIGINT NOT NULL,
    sha256         VARCHAR NOT NULL,
    format         VARCHAR NOT NULL,   -- jsonl | csv | parquet | empty
    compression    VARCHAR NOT NULL,   -- none | gzip | zstd
    preset         VARCHAR NOT NULL,   -- canonical | engine | gateway | mapping:<file>
    rows_read      BIGINT NOT NULL,
    rows_loaded    BIGINT NOT NULL,
    rows_rejected  BIGINT NOT NULL,
    rows_duplicate BIGINT NOT NULL,
    name_reused    BOOLEAN NOT NULL,   -- a file of the same name with another hash was loaded before
    loaded_at      TIMESTAMPTZ NOT NULL
);

-- The canonical request log. One row per distinct canonical row; exact
-- duplicates are counted in ingest_files and not stored twice.
CREATE TABLE IF NOT EXISTS requests (
    row_id            BIGINT NOT NULL,    -- unique surrogate key (request_id may conflict)
    request_id        VARCHAR NOT NULL,
    ts                TIMESTAMPTZ NOT NULL,
    end_ts            TIMESTAMPTZ,
    tenant_id         VARCHAR NOT NULL,
    model             VARCHAR NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT,
    status            INTEGER,
    prefill_instance  VARCHAR,
    decode_instance   VARCHAR,
    prompt_text       VARCHAR,
    response_text     VARCHAR,
    row_hash          UBIGINT NOT NULL,   -- hash of the canonical values, for duplicate detection
    file_id           BIGINT NOT NULL,    -- first file the row was loaded from
    line              BIGINT NOT NULL     -- 1-based line (or data row) in that file
);

-- Every row that could not be loaded, with where it came from and why.
CREATE TABLE IF NOT EXISTS rejected_rows (
    file_id BIGINT NOT NULL,
    line    BIGINT NOT NULL,
    reason  VARCHAR NOT NULL,
    raw     VARCHAR            -- the raw text; never copied into reports or notices
);

-- Analysis outputs (rewritten by each analyze run).
CREATE TABLE IF NOT EXISTS affected_requests (
    request_id        VARCHAR NOT NULL,
    row_id            BIGINT NOT NULL,
    tenant_id         VARCHAR NOT NULL,
    ts                TIMESTAMPTZ NOT NULL,
    end_ts            TIMESTAMPTZ,
    model             VARCHAR NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT,
    capacity_tokens   BIGINT NOT NULL,
    prefill_instance  VARCHAR,
    decode_instance   VARCHAR,
    unknown_slots     BIGINT              -- NULL when the replay could not place the trigger
);

CREATE TABLE IF NOT EXISTS exposures (
    source_request_id   VARCHAR NOT NULL,
    trigger_request_id  VARCHAR NOT NULL,
    source_row_id       BIGINT NOT NULL,
    trigger_row_id      BIGINT NOT NULL,
    source_tenant_id    VARCHAR NOT NULL,
    recipient_tenant_id VARCHAR NOT NULL,
    source_ts           TIMESTAMPTZ NOT NULL,
    trigger_ts          TIMESTAMPTZ NOT NULL,
    tier                VARCHAR NOT NULL,   -- confirmed | probable | possible
    tier_rank           INTEGER NOT NULL,   -- 1 confirmed, 2 probable, 3 possible
    self_exposure       BOOLEAN NOT NULL,
    evidence            VARCHAR NOT NULL    -- key=value pairs; never logged text
);

CREATE TABLE IF NOT EXISTS tenants (
    tenant_id         VARCHAR NOT NULL,
    role              VARCHAR NOT NULL,   -- recipient | source | both
    strongest_tier    VARCHAR NOT NULL,   -- '' when no exposure qualifies
    affected_requests BIGINT NOT NULL,    -- as recipient
    exposed_requests  BIGINT NOT NULL,    -- as cross-tenant source
    first_ts          TIMESTAMPTZ,
    last_ts           TIMESTAMPTZ
);

-- One row per analyze run: the parameters used and the replay's warnings.
CREATE TABLE IF NOT EXISTS analysis_runs (
    incident_id       VARCHAR NOT NULL,
    contamination     VARCHAR NOT NULL,
    allocator         VARCHAR NOT NULL,
    page_size         BIGINT NOT NULL,
    replayed_requests BIGINT NOT NULL,
    replay_warnings   BIGINT NOT NULL,
    triggers          BIGINT NOT NULL,
    exposures         BIGINT NOT NULL,
    analyzed_at       TIMESTAMPTZ NOT NULL
);

-- Notices drafted into an outbox (rewritten by each draft run).
CREATE TABLE IF NOT EXISTS notices (
    notice_id    VARCHAR NOT NULL,   -- e.g. WAI-2026-0908/tenant/acme or WAI-2026-0908/regulator
    kind         VARCHAR NOT NULL,   -- tenant | regulator
    tenant_id    VARCHAR,            -- NULL for the regulator
    roles        VARCHAR NOT NULL,   -- recipient | source | both | self | regulator
    language     VARCHAR NOT NULL,
    recipients   VARCHAR NOT NULL,   -- ;-separated addresses ('' when cannot notify)
    message_id   VARCHAR NOT NULL,
    file         VARCHAR NOT NULL,   -- .eml path relative to the outbox
    status       VARCHAR NOT NULL,   -- ready | blocked | cannot_notify
    reason       VARCHAR NOT NULL,
    drafted_at   TIMESTAMPTZ NOT NULL
);

-- The send ledger: one row per attempt outcome per notice; resumable sending
-- reads the latest state of each notice from here.
CREATE TABLE IF NOT EXISTS send_ledger (
    notice_id    VARCHAR NOT NULL,
    recipient    VARCHAR NOT NULL,
    message_id   VARCHAR NOT NULL,
    status       VARCHAR NOT NULL,   -- sending | accepted | deferred | rejected (failed: older cases, as deferred)
    attempts     INTEGER NOT NULL,
    server_reply VARCHAR NOT NULL,
    attempted_at TIMESTAMPTZ NOT NULL
);

-- notify: the SHA-256 of each drafted .eml (sending refuses a file changed
-- since it was checked), and the order of ledger rows (latest state wins).
ALTER TABLE notices ADD COLUMN IF NOT EXISTS sha256 VARCHAR;
-- notify: the numbers a notice's own facts write (counts, dates' parts),
-- comma-separated, so 'notify check --db' rebuilds the isolation manifest.
ALTER TABLE notices ADD COLUMN IF NOT EXISTS own_numbers VARCHAR;
CREATE SEQUENCE IF NOT EXISTS send_ledger_seq START 1;
ALTER TABLE send_ledger ADD COLUMN IF NOT EXISTS seq BIGINT;
-- notify: one row per address (recipient holds one address; rows of older
-- cases may hold a ;-separated list), statuses sending | accepted | deferred
-- (4xx or no answer: retried) | rejected (5xx: retried only when asked), and
-- the SHA-256 of the message sent (a redraft that changed is told apart).
ALTER TABLE send_ledger ADD COLUMN IF NOT EXISTS sha256 VARCHAR;

-- rfc3339(ts): the one time format of every output: UTC, whole seconds unless
-- the time has a fraction, then microseconds. Formatted from the epoch as a
-- plain TIMESTAMP: strftime and microsecond() on a TIMESTAMPTZ go through
-- ICU's calendar for every row, four times slower (an exposure row formats
-- one or two times; 11M of them at 30M requests).
CREATE OR REPLACE MACRO rfc3339(t) AS
    CASE WHEN t IS NULL THEN NULL
         WHEN NOT isfinite(t) THEN CAST(t AS VARCHAR)
         WHEN epoch_us(t) % 1000000 = 0 THEN strftime(make_timestamp(epoch_us(t)), '%Y-%m-%dT%H:%M:%SZ')
         ELSE strftime(make_timestamp(epoch_us(t)), '%Y-%m-%dT%H:%M:%S.%fZ') END;

-- A fast ingest commits a file's rows together with a row here, then
-- records the file in ingest_files and removes this row in a second
-- transaction (see ingest/fast.go).
CREATE TABLE IF NOT EXISTS ingest_pending (
    file_id BIGINT NOT NULL,
    path    VARCHAR NOT NULL
);

-- Recovery, not schema: the rows of a load interrupted between its two
-- transactions (a crash) are not part of the case. Only those: rows that
-- came by other means are never touched.
DELETE FROM requests WHERE file_id IN (SELECT file_id FROM ingest_pending);
DELETE FROM ingest_pending;

-- Real-layout sources (DESIGN.md "Real logs"). Contract between the layout
-- readers (ingest: one row here per record of a gateway or engine log) and
-- the join (ingest/join.go: source_records -> requests, join_report).
-- A canonical log still loads straight into requests.
CREATE TABLE IF NOT EXISTS source_records (
    record_id         BIGINT NOT NULL,    -- file_id << 32 | line of the record's (last) line; unique (records nested in JSON documents, which share lines: | their ordinal in the file)
    source            VARCHAR NOT NULL,   -- the source's label: "sources[i]" in the incident file, "cli" for LOG arguments
    layout            VARCHAR NOT NULL,   -- sglang | litellm-spendlogs | litellm-payload | cloudflare-aigw | otlp-genai | mapping:<file>
    role              VARCHAR NOT NULL,   -- gateway | prefill | decode | engine
    rid               VARCHAR,            -- the record's own id (gateway id, engine rid, span's gen_ai.response.id)
    bootstrap_room    BIGINT,             -- engines in PD mode: joins prefill and decode
    bootstrap_host    VARCHAR,
    instance          VARCHAR,            -- engine host (from the file name or a field); NULL for gateways
    ts                TIMESTAMPTZ,        -- received / start time, UTC
    end_ts            TIMESTAMPTZ,        -- finished / end time, UTC
    tenant_id         VARCHAR,            -- gateways, or an engine field the source names
    model             VARCHAR,            -- the record's model, else the source's model:
    prompt_tokens     BIGINT,
    completion_tokens BIGINT,
    cached_tokens     BIGINT,
    status            INTEGER,            -- gateway: HTTP status the customer got; engine: an abort's status_code, else NULL
    finish_type       VARCHAR,            -- engine: stop | length | abort | NULL (no finished event)
    finish_message    VARCHAR,            -- engine: the abort message
    prompt_text       VARCHAR,
    response_text     VARCHAR,
    row_hash          UBIGINT NOT NULL,   -- hash of the record's values, for duplicate detection within source records
    file_id           BIGINT NOT NULL,
    line              BIGINT NOT NULL
);

-- Joined requests: which source records make each request (custody of the join).
CREATE TABLE IF NOT EXISTS request_sources (
    row_id    BIGINT NOT NULL,            -- requests.row_id
    record_id BIGINT NOT NULL,            -- source_records.record_id
    role      VARCHAR NOT NULL
);

-- The join's counts, rewritten by each join (DESIGN.md): outcome matched | unmatched | ambiguous.
CREATE TABLE IF NOT EXISTS join_report (
    source  VARCHAR NOT NULL,
    layout  VARCHAR NOT NULL,
    role    VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,
    reason  VARCHAR NOT NULL,
    records BIGINT NOT NULL
);

-- What a joined request carries beyond the canonical row (one row per
-- requests row the join made; canonical rows have none): whether the call
-- held decode slots (from the decode record; NULL: decided by status, as
-- for a canonical row) and whether its prefill record cut the prompt (the
-- bug's fingerprint).
CREATE TABLE IF NOT EXISTS joined_requests (
    row_id         BIGINT NOT NULL,      -- requests.row_id
    held_slots     BOOLEAN,
    cut_at_prefill BOOLEAN NOT NULL
);

-- analysis: every served call one of the two trigger tests flags (rewritten
-- by each analyze run): over capacity (in scope, prompt above the prefill
-- pool in force) and cut at prefill (joined_requests). The evidence column
-- of affected_requests.csv and trigger_disagreements.csv are read from here.
CREATE TABLE IF NOT EXISTS trigger_checks (
    row_id          BIGINT NOT NULL,    -- requests.row_id
    request_id      VARCHAR NOT NULL,
    ts              TIMESTAMPTZ NOT NULL,
    in_scope        BOOLEAN NOT NULL,   -- model listed and ts in the window
    over_capacity   BOOLEAN NOT NULL,
    cut_at_prefill  BOOLEAN NOT NULL,
    prompt_tokens   BIGINT NOT NULL,
    capacity_tokens BIGINT NOT NULL,
    evidence        VARCHAR NOT NULL,   -- over_capacity, cut_at_prefill, or both (space-separated, in that order)
    disagreement    VARCHAR             -- why the two tests disagree; NULL when they agree
);

-- notify: what the isolation manifest needs beside the analysis, recorded by
-- each draft so that 'notify check --db' can rebuild the manifest from the
-- case alone: the directory's ids, names and addresses, and (tenant_id NULL,
-- kind 'provider') the provider's own name, addresses, incident id and title.
CREATE TABLE IF NOT EXISTS notice_identities (
    tenant_id VARCHAR,            -- NULL for the provider
    kind      VARCHAR NOT NULL,   -- tenant_id | name | email | provider
    value     VARCHAR NOT NULL
);

-- Content-match fingerprints of every logged prompt (package textmatch):
-- the winnowed 5-word shingle hashes of each prompt. Never the text.
-- Filled incrementally: text_indexed lists the rows already fingerprinted.
-- A response is fingerprinted when it is compared (a trigger's, or swept).
CREATE TABLE IF NOT EXISTS text_fingerprints (
    row_id BIGINT NOT NULL,     -- requests.row_id
    hash   BIGINT NOT NULL,
    tm     INTEGER NOT NULL     -- text_tenant_models.tm of the row's model and tenant_id
);
-- Cases of earlier versions kept a kind column (and response
-- fingerprints) instead of tm: casedb forgets their index, which the next
-- analysis makes again (casedb_fingerprints_*).
-- The (model, tenant_id) pairs of the case's requests, numbered from 1:
-- how many tenants' prompts of a model hold a fingerprint is counted on
-- the fingerprints alone (evidence_11), not joined with every request.
CREATE TABLE IF NOT EXISTS text_tenant_models (
    tm        INTEGER NOT NULL,
    model     VARCHAR NOT NULL,
    tenant_id VARCHAR NOT NULL
);
-- Cases of earlier versions kept every distinct shingle of each prompt, a
-- third of the case; how many tenants' prompts hold a shingle is now
-- counted on the prompts read again, for the shingles candidate matches
-- share only (package textmatch).
DROP TABLE IF EXISTS text_prompt_shingles;
CREATE TABLE IF NOT EXISTS text_indexed (
    row_id   BIGINT NOT NULL,
    row_hash UBIGINT NOT NULL   -- requests.row_hash when fingerprinted: a changed row is done again
);
-- What requests and text_indexed held when the fingerprints were last
-- brought up to date (one row, or none while an update is under way): a
-- later run that finds both the same skips the joins of every row that look
-- for new, changed or gone ones (24 s at 30M requests).
CREATE TABLE IF NOT EXISTS text_index_state (
    requests_rows BIGINT NOT NULL,
    requests_sum  HUGEINT NOT NULL,   -- sum of hash(row_id, row_hash) over requests
    indexed_rows  BIGINT NOT NULL,
    indexed_sum   HUGEINT NOT NULL    -- the same over text_indexed
);
-- Memos of the content match's tenant counts, which depend only on the
-- fingerprints (emptied whenever those change, with text_index_state): a
-- second analysis or sweep reads them instead of counting over every
-- prompt fingerprint and shingle again. text_spec_memo: the response
-- fingerprints of the responses in text_spec_rows that the prompts (as
-- fingerprints) of 2 or more tenants of the model hold, with how many;
-- text_common_memo: every shared shingle counted so far, with the tenants
-- whose prompts of the model hold it (0 or more).
CREATE TABLE IF NOT EXISTS text_spec_rows (
    row_id BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS text_spec_memo (
    model   VARCHAR NOT NULL,
    hash    BIGINT NOT NULL,
    tenants BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS text_common_memo (
    model   VARCHAR NOT NULL,
    hash    BIGINT NOT NULL,
    tenants BIGINT NOT NULL
);

-- The sweep's strong matches (sweep.csv) and its per-day counts
-- (sweep_days.csv), rewritten by each sweep.
CREATE TABLE IF NOT EXISTS sweep_matches (
    response_row_id BIGINT NOT NULL,
    source_row_id   BIGINT NOT NULL,
    shingles        INTEGER NOT NULL,
    run             INTEGER NOT NULL,
    rare            INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sweep_days (
    day                DATE NOT NULL,
    model              VARCHAR NOT NULL,
    responses          BIGINT NOT NULL,
    leaking_responses  BIGINT NOT NULL,
    source_tenants     BIGINT NOT NULL,
    recipient_tenants  BIGINT NOT NULL
);

-- Present in the cases whose exposures are stored in exposures.csv's order
-- (analysis_14 inserts them so, and the outputs read them without a sort).
-- Opening a case of an earlier version, which has exposures and not this
-- table, sorts its exposures once (casedb.ApplySchema). No row is ever
-- written: the table's existence is the mark (DuckDB wants a column).
CREATE TABLE IF NOT EXISTS exposures_in_order (unused BOOLEAN);
