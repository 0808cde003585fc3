-- evidence: the thresholds of this comparison (contamination.evidence).
-- args: 3
INSERT INTO text_params VALUES ($1::INTEGER);
