-- analysis: the logged responses of the triggers, read once to hash their shingles (the text never leaves Go).
SELECT t.row_id, r.response_text
FROM analysis_triggers t JOIN requests r ON r.row_id = t.row_id
WHERE r.response_text IS NOT NULL
ORDER BY t.row_id;
