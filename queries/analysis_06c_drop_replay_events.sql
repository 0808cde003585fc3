-- analysis: drop the replay's events once read.
DROP TABLE IF EXISTS analysis_replay_events;
