-- join: forget the previous join's request-to-record links.
DELETE FROM request_sources;
