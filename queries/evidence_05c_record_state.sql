-- evidence: record the state the completed fingerprinting leaves: requests as it was read (unchanged by the hashing), text_indexed as it is now.
INSERT INTO text_index_state
SELECT n.requests_rows, n.requests_sum, i.indexed_rows, i.indexed_sum
FROM text_state_now n,
     (SELECT count(*) AS indexed_rows, coalesce(sum(hash(row_id, row_hash)), 0) AS indexed_sum FROM text_indexed) i;
