-- casedb: a case of an earlier version's exposures, in exposures.csv's order, into a temp table (the first of four steps that sort them once).
CREATE OR REPLACE TEMP TABLE casedb_exposures_sorted AS
SELECT * FROM exposures
ORDER BY trigger_ts, trigger_request_id, source_request_id, trigger_row_id, source_row_id;
