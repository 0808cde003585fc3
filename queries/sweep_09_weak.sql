-- sweep: the strongest weak match (the highest rare and run among measured pairs that are not strong): how far chance matches reach below the thresholds.
SELECT coalesce(max(rare), 0), coalesce(max(run), 0) FROM text_matches WHERE NOT strong;
