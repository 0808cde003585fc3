-- evidence: the first and last row_id of the case's requests, cut into ranges for evidence_10f_spec_piece.
SELECT min(row_id), max(row_id) FROM requests;
