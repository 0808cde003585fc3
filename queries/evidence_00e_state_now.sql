-- evidence: the state of requests and text_indexed now (row counts and sums of each row's hash(row_id, row_hash)): equal to text_index_state, nothing is new, changed or gone since the last fingerprinting, and neither table's every row need be joined.
CREATE OR REPLACE TEMP TABLE text_state_now AS
SELECT (SELECT count(*) FROM requests) AS requests_rows,
       (SELECT coalesce(sum(hash(row_id, row_hash)), 0) FROM requests) AS requests_sum,
       (SELECT count(*) FROM text_indexed) AS indexed_rows,
       (SELECT coalesce(sum(hash(row_id, row_hash)), 0) FROM text_indexed) AS indexed_sum;
