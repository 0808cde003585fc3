-- evidence: forget the fingerprinted rows gone from requests or changed since.
DELETE FROM text_indexed WHERE row_id NOT IN (
    SELECT t.row_id FROM text_indexed t SEMI JOIN requests r ON r.row_id = t.row_id AND r.row_hash = t.row_hash);
