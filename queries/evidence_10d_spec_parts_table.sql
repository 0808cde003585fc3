-- evidence: the distinct (model, hash, tenant) of each range of prompts (evidence_10f_spec_piece), counted whole by evidence_11_spec.
CREATE OR REPLACE TEMP TABLE text_spec_parts (
    model     VARCHAR,
    hash      BIGINT,
    tenant_id VARCHAR
);
