-- analysis: one exposure per (source, trigger) pair with its strongest tier and the evidence of every tier that applies.
-- Sources are served rows other than the trigger (residency: rows that held
-- decode slots, as in the replay). A source with no tenant ('': an engine
-- record no gateway record claims) is never the recipient's own data. "placed" = the replay can
-- place the row: a decode instance and an end_ts not before ts.
--  confirmed: a strong, specific content match (text_matches.strong, package
--             textmatch; the candidates of analysis_08 already precede the
--             trigger in replay order on the same decode instance or an
--             unknown one). A weak match never confirms: its figures are
--             still given in the evidence of the pair's other tier.
--  probable:  replay: previous owners of the slots the trigger got but did
--             not overwrite (from Go). residency: a placed source on the
--             trigger's decode instance that ended in [ts - lookback, ts].
--  possible:  the source or the trigger is not placed; same model; source
--             ts in [trigger ts - possible_lookback, trigger ts); same
--             decode instance when both are known.
-- The range joins go through time buckets one lookback wide, so each
-- trigger only meets the rows of two buckets.
-- Only the columns each step needs are read from requests (10M rows at
-- scale): no wide common table of every served row. The tiers' rows are
-- not made distinct one by one: pairs' GROUP BY does it once (max and
-- bit_or of duplicates are those of one row).
-- The rows are inserted in exposures.csv's order (trigger ts, trigger id,
-- source id): a scan of the table keeps insertion order, so the file, the
-- workbook and the page read it without a sort. Sorting here carries the
-- evidence's parts, not its string, formatted after the sort: at 100M
-- requests (45M exposures) the sort of the finished rows spilled 8 GB.
INSERT INTO exposures
WITH p AS (SELECT * FROM analysis_params),
trig AS (
    SELECT t.row_id, t.request_id, t.tenant_id, t.ts, t.model, t.decode_instance,
           (t.decode_instance IS NOT NULL AND t.end_ts IS NOT NULL AND t.end_ts >= t.ts) AS placed
    FROM analysis_triggers t
),
confirmed AS (
    SELECT source_row_id, response_row_id AS trigger_row_id, 4 AS tiers
    FROM text_matches WHERE strong
),
replayed AS (
    SELECT source_row_id, trigger_row_id, slots * 8 AS tiers FROM analysis_pairs WHERE slots > 0
),
res_trig AS (
    SELECT t.row_id, t.ts, t.decode_instance,
           unnest([epoch_us(t.ts) // p.residency_lookback_us - 1, epoch_us(t.ts) // p.residency_lookback_us]) AS bucket
    FROM trig t, p
    WHERE t.decode_instance IS NOT NULL AND p.contamination = 'residency'
),
residency AS (
    SELECT s.row_id AS source_row_id, t.row_id AS trigger_row_id, 2 AS tiers
    FROM res_trig t, p,
         (SELECT r.row_id, r.decode_instance, r.end_ts, epoch_us(r.end_ts) // q.residency_lookback_us AS bucket
          FROM requests r CROSS JOIN analysis_params q
          LEFT JOIN joined_requests j ON j.row_id = r.row_id
          WHERE q.contamination = 'residency'
            AND coalesce(j.held_slots, r.status IS NULL OR r.status BETWEEN 200 AND 299)
            AND r.decode_instance IS NOT NULL AND r.end_ts IS NOT NULL AND r.end_ts >= r.ts) s
    WHERE s.decode_instance = t.decode_instance AND s.bucket = t.bucket
      AND s.end_ts <= t.ts AND s.end_ts >= t.ts - p.residency_lookback AND s.row_id <> t.row_id
),
pos_trig AS (
    SELECT t.*,
           unnest([epoch_us(t.ts) // p.possible_lookback_us - 1, epoch_us(t.ts) // p.possible_lookback_us]) AS bucket
    FROM trig t, p
),
-- Two parts, by whether the trigger is placed, so that each join meets
-- only the rows it can keep: a placed trigger takes only unplaced sources
-- (a few thousand in the case), an unplaced trigger (few) every source.
-- One join of every trigger with every served row of its buckets, filtered
-- after, grew with the square of the traffic (30M requests: 1.7 billion
-- joined rows for 1.6M kept).
possible AS (
    SELECT s.row_id AS source_row_id, t.row_id AS trigger_row_id, 1 AS tiers
    FROM pos_trig t, p,
         (SELECT r.row_id, r.ts, r.model, r.decode_instance,
                 epoch_us(r.ts) // q.possible_lookback_us AS bucket
          FROM requests r, analysis_params q
          WHERE (r.status IS NULL OR r.status BETWEEN 200 AND 299)) s
    WHERE NOT t.placed
      AND s.model = t.model AND s.bucket = t.bucket
      AND s.ts < t.ts AND s.ts >= t.ts - p.possible_lookback
      AND (s.decode_instance = t.decode_instance OR s.decode_instance IS NULL OR t.decode_instance IS NULL)
    UNION ALL
    SELECT s.row_id AS source_row_id, t.row_id AS trigger_row_id, 1 AS tiers
    FROM pos_trig t, p,
         (SELECT r.row_id, r.ts, r.model, r.decode_instance,
                 epoch_us(r.ts) // q.possible_lookback_us AS bucket
          FROM requests r, analysis_params q
          WHERE (r.status IS NULL OR r.status BETWEEN 200 AND 299)
            AND NOT (r.decode_instance IS NOT NULL AND r.end_ts IS NOT NULL AND r.end_ts >= r.ts)) s
    WHERE t.placed
      AND s.model = t.model AND s.bucket = t.bucket
      AND s.ts < t.ts AND s.ts >= t.ts - p.possible_lookback
      AND (s.decode_instance = t.decode_instance OR s.decode_instance IS NULL)
),
-- The tiers of a pair packed into one number, tiers = slots * 8 + strong *
-- 4 + res * 2 + pos (no slots: 0, as the outputs read it), so that the join
-- with requests builds its hash table on three integers a pair, not on the
-- triggers' columns too: at 10M requests under a 300 MiB limit the join
-- took a third of the time (at 100M both spill; docs/performance.md).
-- Each tier's rows come packed already (one column, not four mostly NULL),
-- and a pair's are merged with two aggregates: the most slots, and the
-- flags of every tier that applies.
pairs AS (
    SELECT source_row_id, trigger_row_id, (max(tiers >> 3) << 3) | bit_or(tiers & 7) AS tiers
    FROM (SELECT * FROM confirmed
          UNION ALL SELECT * FROM replayed
          UNION ALL SELECT * FROM residency
          UNION ALL SELECT * FROM possible)
    GROUP BY ALL
)
SELECT source_request_id, trigger_request_id, source_row_id, trigger_row_id, source_tenant_id, recipient_tenant_id,
       source_ts, trigger_ts,
       CASE WHEN strong THEN 'confirmed' WHEN slots > 0 OR res THEN 'probable' ELSE 'possible' END,
       CASE WHEN strong THEN 1 WHEN slots > 0 OR res THEN 2 ELSE 3 END,
       source_tenant_id = recipient_tenant_id AND source_tenant_id <> '',
       concat_ws(' ',
           CASE WHEN shingles > 0 THEN 'shingles=' || shingles || ' run=' || run || ' rare=' || rare END,
           CASE WHEN slots > 0 THEN 'slots=' || slots END,
           'instance=' || coalesce(trigger_instance, 'unknown'),
           CASE WHEN source_instance IS DISTINCT FROM trigger_instance
                THEN 'source_instance=' || coalesce(source_instance, 'unknown') END,
           -- one time per row (formatting is the costly part at 4M rows):
           -- when the source's slots were freed for probable, else its arrival.
           CASE WHEN (slots > 0 OR res) AND source_end IS NOT NULL THEN 'source_end=' || rfc3339(source_end)
                ELSE 'source_ts=' || rfc3339(source_ts) END,
           CASE WHEN res THEN 'residency=' || residency_label END,
           CASE WHEN pos THEN 'possible=' || possible_label END)
FROM (
    SELECT s.request_id AS source_request_id, t.request_id AS trigger_request_id, s.row_id AS source_row_id,
           t.row_id AS trigger_row_id, s.tenant_id AS source_tenant_id, t.tenant_id AS recipient_tenant_id,
           s.ts AS source_ts, t.ts AS trigger_ts, s.end_ts AS source_end,
           s.decode_instance AS source_instance, t.decode_instance AS trigger_instance,
           s.tiers & 4 <> 0 AS strong, s.tiers >> 3 AS slots, s.tiers & 2 <> 0 AS res, s.tiers & 1 <> 0 AS pos,
           m.shingles, m.run, m.rare, p.residency_label, p.possible_label
    FROM (SELECT x.trigger_row_id, x.tiers, r.request_id, r.row_id, r.tenant_id, r.ts, r.end_ts, r.decode_instance
          FROM pairs x JOIN requests r ON r.row_id = x.source_row_id) s
    JOIN trig t ON t.row_id = s.trigger_row_id
    LEFT JOIN text_matches m ON m.response_row_id = s.trigger_row_id AND m.source_row_id = s.row_id, p
    ORDER BY t.ts, t.request_id, s.request_id, t.row_id, s.row_id
);
