-- notify: drops notify_identifiers once read.
DROP TABLE IF EXISTS notify_identifiers;
