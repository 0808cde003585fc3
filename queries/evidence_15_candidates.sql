-- evidence: the candidate (response, source) pairs to measure, in a fixed order.
SELECT response_row_id, source_row_id FROM text_candidates ORDER BY response_row_id, source_row_id;
