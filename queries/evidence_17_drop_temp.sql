-- evidence: drop the content match's temp tables (a case database keeps none).
DROP TABLE IF EXISTS text_pending;
