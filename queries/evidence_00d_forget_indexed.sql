-- evidence: forget which rows are fingerprinted (a case fingerprinted before prompt shingles were kept is done again).
DELETE FROM text_indexed;
