-- evidence: forget the memo of shared shingles' tenant counts (they hold for the fingerprints they were made with, which are changing).
DELETE FROM text_common_memo;
