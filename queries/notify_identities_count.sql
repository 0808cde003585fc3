-- notify: how many identities the last draft recorded (0: drafted before notice_identities existed).
SELECT count(*) FROM notice_identities;
