-- notify: empty notice_identities before a draft run records the directory and provider again.
DELETE FROM notice_identities;
