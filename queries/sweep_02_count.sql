-- sweep: how many responses with logged text are compared.
SELECT count(*) FROM text_responses;
