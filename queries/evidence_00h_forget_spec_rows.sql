-- evidence: forget which responses' counts text_spec_memo holds (they hold for the fingerprints they were made with, which are changing).
DELETE FROM text_spec_rows;
