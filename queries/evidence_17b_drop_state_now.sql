-- evidence: drop the temp table of the state read at the start of the fingerprinting.
DROP TABLE IF EXISTS text_state_now;
