-- evidence: drop the temp table of the new shared shingles once they are counted.
DROP TABLE IF EXISTS text_shared_new;
