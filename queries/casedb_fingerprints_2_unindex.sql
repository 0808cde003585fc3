-- casedb: no row fingerprinted (the fingerprints of an earlier version are gone): the next analysis fingerprints every logged prompt.
DELETE FROM text_indexed;
