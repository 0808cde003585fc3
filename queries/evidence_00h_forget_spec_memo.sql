-- evidence: forget the memo of response fingerprints' tenant counts (they hold for the fingerprints they were made with, which are changing).
DELETE FROM text_spec_memo;
