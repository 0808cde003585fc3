-- evidence: forget the recorded state before the fingerprints change (an update cut short leaves none, so the next run checks every row).
DELETE FROM text_index_state;
