-- Disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- Create "new_agents" table
CREATE TABLE `new_agents` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `name` text NOT NULL, `description` text NOT NULL DEFAULT (''), `online` bool NOT NULL DEFAULT (false), `session` text NOT NULL DEFAULT (''), `capabilities` json NULL, `protocol` text NOT NULL DEFAULT (''), `build` text NOT NULL DEFAULT (''), `tools` json NULL, `tools_on` json NULL, `tools_spoken` bool NOT NULL DEFAULT (false), `tools_set_at` datetime NULL, `tools_set_by` text NOT NULL DEFAULT (''), `health_status` text NOT NULL DEFAULT (''), `health_checks` blob NULL, `health_started` datetime NULL, `health_received` datetime NULL, `paused` bool NOT NULL DEFAULT (false), `pause_reason` text NOT NULL DEFAULT (''), `pause_by` text NOT NULL DEFAULT (''), `pause_time` datetime NULL, `pause_origin` text NOT NULL DEFAULT (''), `pause_delivered` bool NOT NULL DEFAULT (false), `inputs` blob NULL, `runs_dropped` integer NOT NULL DEFAULT (0), `package_name` text NOT NULL DEFAULT (''), `package_version` text NOT NULL DEFAULT (''), `package_digest` text NOT NULL DEFAULT (''), `triggers` blob NULL, `triggers_time` datetime NULL, `trigger_pauses` blob NULL, `cycle_count` integer NOT NULL DEFAULT (0), `cycle_last` datetime NULL, `first_seen` datetime NOT NULL, `last_seen` datetime NOT NULL, `board` text NOT NULL DEFAULT (''));
-- Copy rows from old table "agents" to new temporary table "new_agents"
INSERT INTO `new_agents` (`id`, `name`, `description`, `online`, `session`, `capabilities`, `protocol`, `build`, `tools`, `tools_on`, `tools_spoken`, `tools_set_at`, `tools_set_by`, `health_status`, `health_checks`, `health_started`, `health_received`, `paused`, `pause_reason`, `pause_by`, `pause_time`, `pause_origin`, `pause_delivered`, `inputs`, `runs_dropped`, `package_name`, `package_version`, `package_digest`, `triggers`, `triggers_time`, `trigger_pauses`, `cycle_count`, `cycle_last`, `first_seen`, `last_seen`) SELECT `id`, `name`, `description`, `online`, `session`, `capabilities`, `protocol`, `build`, `tools`, `tools_on`, `tools_spoken`, `tools_set_at`, `tools_set_by`, `health_status`, `health_checks`, `health_started`, `health_received`, `paused`, `pause_reason`, `pause_by`, `pause_time`, `pause_origin`, `pause_delivered`, `inputs`, `runs_dropped`, `package_name`, `package_version`, `package_digest`, `triggers`, `triggers_time`, `trigger_pauses`, `cycle_count`, `cycle_last`, `first_seen`, `last_seen` FROM `agents`;
-- Drop "agents" table after copying rows
DROP TABLE `agents`;
-- Rename temporary table "new_agents" to "agents"
ALTER TABLE `new_agents` RENAME TO `agents`;
-- Create index "agents_name_key" to table: "agents"
CREATE UNIQUE INDEX `agents_name_key` ON `agents` (`name`);
-- Create index "agent_online" to table: "agents"
CREATE INDEX `agent_online` ON `agents` (`online`);
-- Create index "agent_package_digest" to table: "agents"
CREATE INDEX `agent_package_digest` ON `agents` (`package_digest`);
-- Create "board_leases" table
CREATE TABLE `board_leases` (`id` text NOT NULL, `started_at` datetime NOT NULL, `expires_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- Enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
