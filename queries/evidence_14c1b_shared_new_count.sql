-- evidence: how many shared shingles are to be counted (none: every one is in text_common_memo, and no prompt shingle is read).
SELECT count(*) FROM text_shared_new;
