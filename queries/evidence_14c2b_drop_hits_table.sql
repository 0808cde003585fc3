-- evidence: drop the temp table of the hits once they are counted.
DROP TABLE IF EXISTS text_prompt_hits;
