-- evidence: the distinct hashes of the new shared shingles, which the prompts read again are looked up in (in Go).
SELECT DISTINCT hash FROM text_shared_new;
