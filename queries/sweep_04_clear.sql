-- sweep: forget the previous sweep's matches.
DELETE FROM sweep_matches;
