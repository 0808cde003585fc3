-- casedb: the temp table of the sorted exposures dropped.
DROP TABLE IF EXISTS casedb_exposures_sorted;
