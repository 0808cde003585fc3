-- evidence: the models of the new shared shingles, read once: each range of prompts read again is filtered on this list (a subquery would count the distinct models of every new shared shingle again for each range: 475 ranges of 7M at 100M requests).
SELECT DISTINCT model FROM text_shared_new ORDER BY model;
