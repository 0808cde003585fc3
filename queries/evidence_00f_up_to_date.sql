-- evidence: true when requests and text_indexed are as the last complete fingerprinting left them (text_index_state): no row to fingerprint, none stale.
SELECT EXISTS (
    SELECT 1 FROM text_index_state s JOIN text_state_now n
      ON s.requests_rows = n.requests_rows AND s.requests_sum = n.requests_sum
     AND s.indexed_rows = n.indexed_rows AND s.indexed_sum = n.indexed_sum);
