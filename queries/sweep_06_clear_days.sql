-- sweep: forget the previous sweep's days.
DELETE FROM sweep_days;
