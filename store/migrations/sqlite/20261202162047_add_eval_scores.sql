-- Create "eval_scores" table
CREATE TABLE `eval_scores` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `agent` text NOT NULL, `suite` text NOT NULL, `build` text NOT NULL, `score_time` datetime NOT NULL, `score` real NOT NULL, `passed` bool NOT NULL, `cases` integer NOT NULL, `completed` integer NOT NULL, `scored` integer NOT NULL, `times` integer NOT NULL, `criteria` json NULL, `threshold` real NULL, `source` text NOT NULL, `received` datetime NOT NULL);
-- Create index "evalscore_agent_suite_build" to table: "eval_scores"
CREATE UNIQUE INDEX `evalscore_agent_suite_build` ON `eval_scores` (`agent`, `suite`, `build`);
-- Create index "evalscore_agent_suite_score_time" to table: "eval_scores"
CREATE INDEX `evalscore_agent_suite_score_time` ON `eval_scores` (`agent`, `suite`, `score_time`);
