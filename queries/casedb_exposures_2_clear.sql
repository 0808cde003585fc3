-- casedb: the exposures of a case of an earlier version removed, to be inserted again in order.
DELETE FROM exposures;
