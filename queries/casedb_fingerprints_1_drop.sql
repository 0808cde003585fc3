-- casedb: the content index of an earlier version dropped (the schema makes text_fingerprints again, empty).
DROP TABLE text_fingerprints;
