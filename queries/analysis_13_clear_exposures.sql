-- analysis: forget the previous run's exposures.
DELETE FROM exposures;
