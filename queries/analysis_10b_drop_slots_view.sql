-- analysis: drop the Arrow view of the trigger slots (it points at process memory; a case database keeps no such view).
DROP VIEW IF EXISTS arrow_analysis_trigger_slots;
