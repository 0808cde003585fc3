-- analysis: the decode instances of the log, in the replay's order (byte order).
SELECT DISTINCT decode_instance FROM requests WHERE decode_instance IS NOT NULL ORDER BY decode_instance;
