-- analysis: forget the previous run's trigger checks.
DELETE FROM trigger_checks;
