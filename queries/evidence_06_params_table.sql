-- evidence: an empty temp table for the thresholds the content-match queries read.
CREATE OR REPLACE TEMP TABLE text_params (common_tenants INTEGER NOT NULL);
