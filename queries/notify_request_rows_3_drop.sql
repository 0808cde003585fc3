-- notify: drops notify_request_rows once read.
DROP TABLE IF EXISTS notify_request_rows;
