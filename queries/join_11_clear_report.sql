-- join: forget the previous join's counts.
DELETE FROM join_report;
