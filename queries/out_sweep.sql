-- sweep.csv: every strong match of a response with an earlier prompt of another tenant, sorted by response then source request id.
SELECT r.request_id AS response_request_id, r.tenant_id AS response_tenant_id,
       s.request_id AS source_request_id, s.tenant_id AS source_tenant_id,
       m.shingles, m.run, m.rare,
       round(epoch_us(r.ts) - epoch_us(s.ts)) / 1e6 AS delay_s,
       r.model, r.decode_instance AS response_decode_instance, s.decode_instance AS source_decode_instance
FROM sweep_matches m
JOIN requests r ON r.row_id = m.response_row_id
JOIN requests s ON s.row_id = m.source_row_id
ORDER BY response_request_id, source_request_id, m.response_row_id, m.source_row_id;
