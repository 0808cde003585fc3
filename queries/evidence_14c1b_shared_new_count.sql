-- evidence: how many shared shingles are to be counted (none: every one is in text_common_memo, and no prompt is read again).
SELECT count(*) FROM text_shared_new;
