-- evidence: fingerprinted rows that are gone from requests or changed since (their fingerprints are dropped before new ones are added).
SELECT count(*) FROM text_indexed t ANTI JOIN requests r ON r.row_id = t.row_id AND r.row_hash = t.row_hash;
