-- casedb: the sorted exposures inserted again (a scan of one table keeps its order).
INSERT INTO exposures SELECT * FROM casedb_exposures_sorted;
