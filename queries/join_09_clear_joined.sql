-- join: forget the previous join's per-request marks.
DELETE FROM joined_requests;
