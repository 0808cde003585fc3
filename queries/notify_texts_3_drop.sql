-- notify: drops notify_texts once read.
DROP TABLE IF EXISTS notify_texts;
