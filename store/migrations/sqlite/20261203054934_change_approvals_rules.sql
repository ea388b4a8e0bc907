-- Disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- Add column "escalation" to table: "rules"
ALTER TABLE `rules` ADD COLUMN `escalation` json NULL;
-- Create "new_approvals" table
CREATE TABLE `new_approvals` (`id` text NOT NULL, `agent` text NOT NULL, `run` text NOT NULL, `thread` text NOT NULL DEFAULT (''), `run_id` text NOT NULL DEFAULT (''), `node` text NOT NULL, `ask` text NOT NULL DEFAULT (''), `show` text NOT NULL, `account` text NOT NULL DEFAULT (''), `digest` text NOT NULL, `rule_id` text NOT NULL DEFAULT (''), `state` text NOT NULL, `created_at` datetime NOT NULL, `decided_at` datetime NULL, `expires_at` datetime NULL, `say` text NOT NULL DEFAULT (''), `decision_digest` text NOT NULL DEFAULT (''), `decided_by` json NULL, `reason` text NOT NULL DEFAULT (''), `votes` json NULL, `delivered_at` datetime NULL, `traceparent` text NOT NULL DEFAULT (''), `decision_traceparent` text NOT NULL DEFAULT (''), `receipt` text NOT NULL DEFAULT (''), `consent_id` text NOT NULL DEFAULT (''), `escalation_level` integer NOT NULL DEFAULT (0), PRIMARY KEY (`id`));
-- Copy rows from old table "approvals" to new temporary table "new_approvals"
INSERT INTO `new_approvals` (`id`, `agent`, `run`, `thread`, `run_id`, `node`, `ask`, `show`, `account`, `digest`, `rule_id`, `state`, `created_at`, `decided_at`, `expires_at`, `say`, `decision_digest`, `decided_by`, `reason`, `votes`, `delivered_at`, `traceparent`, `decision_traceparent`, `receipt`, `consent_id`) SELECT `id`, `agent`, `run`, `thread`, `run_id`, `node`, `ask`, `show`, `account`, `digest`, `rule_id`, `state`, `created_at`, `decided_at`, `expires_at`, `say`, `decision_digest`, `decided_by`, `reason`, `votes`, `delivered_at`, `traceparent`, `decision_traceparent`, `receipt`, `consent_id` FROM `approvals`;
-- Drop "approvals" table after copying rows
DROP TABLE `approvals`;
-- Rename temporary table "new_approvals" to "approvals"
ALTER TABLE `new_approvals` RENAME TO `approvals`;
-- Create index "approval_one_pending" to table: "approvals"
CREATE UNIQUE INDEX `approval_one_pending` ON `approvals` (`agent`, `run`, `node`) WHERE state = 'pending';
-- Create index "approval_agent_run_node_created_at" to table: "approvals"
CREATE INDEX `approval_agent_run_node_created_at` ON `approvals` (`agent`, `run`, `node`, `created_at`);
-- Create index "approval_created_at_id_state" to table: "approvals"
CREATE INDEX `approval_created_at_id_state` ON `approvals` (`created_at`, `id`, `state`);
-- Create index "approval_state_created_at_id" to table: "approvals"
CREATE INDEX `approval_state_created_at_id` ON `approvals` (`state`, `created_at`, `id`);
-- Create index "approval_state_expires_at" to table: "approvals"
CREATE INDEX `approval_state_expires_at` ON `approvals` (`state`, `expires_at`);
-- Create index "approval_agent_created_at_id_state" to table: "approvals"
CREATE INDEX `approval_agent_created_at_id_state` ON `approvals` (`agent`, `created_at`, `id`, `state`);
-- Create index "approval_agent_state_created_at_id" to table: "approvals"
CREATE INDEX `approval_agent_state_created_at_id` ON `approvals` (`agent`, `state`, `created_at`, `id`);
-- Create index "approval_agent_run_id_node" to table: "approvals"
CREATE INDEX `approval_agent_run_id_node` ON `approvals` (`agent`, `run_id`, `node`);
-- Create index "approval_agent_delivered_at_say" to table: "approvals"
CREATE INDEX `approval_agent_delivered_at_say` ON `approvals` (`agent`, `delivered_at`, `say`);
-- Enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
