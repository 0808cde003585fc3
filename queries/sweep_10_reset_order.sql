-- sweep: insertion order preserved again (the ingest numbers rows in file order on it).
RESET preserve_insertion_order;
