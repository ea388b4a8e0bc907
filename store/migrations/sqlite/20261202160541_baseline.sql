-- Create "agents" table
CREATE TABLE `agents` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `name` text NOT NULL, `description` text NOT NULL DEFAULT (''), `online` bool NOT NULL DEFAULT (false), `session` text NOT NULL DEFAULT (''), `capabilities` json NULL, `protocol` text NOT NULL DEFAULT (''), `build` text NOT NULL DEFAULT (''), `tools` json NULL, `tools_on` json NULL, `tools_spoken` bool NOT NULL DEFAULT (false), `tools_set_at` datetime NULL, `tools_set_by` text NOT NULL DEFAULT (''), `health_status` text NOT NULL DEFAULT (''), `health_checks` blob NULL, `health_started` datetime NULL, `health_received` datetime NULL, `paused` bool NOT NULL DEFAULT (false), `pause_reason` text NOT NULL DEFAULT (''), `pause_by` text NOT NULL DEFAULT (''), `pause_time` datetime NULL, `pause_origin` text NOT NULL DEFAULT (''), `pause_delivered` bool NOT NULL DEFAULT (false), `inputs` blob NULL, `runs_dropped` integer NOT NULL DEFAULT (0), `package_name` text NOT NULL DEFAULT (''), `package_version` text NOT NULL DEFAULT (''), `package_digest` text NOT NULL DEFAULT (''), `triggers` blob NULL, `triggers_time` datetime NULL, `trigger_pauses` blob NULL, `cycle_count` integer NOT NULL DEFAULT (0), `cycle_last` datetime NULL, `first_seen` datetime NOT NULL, `last_seen` datetime NOT NULL);
-- Create index "agents_name_key" to table: "agents"
CREATE UNIQUE INDEX `agents_name_key` ON `agents` (`name`);
-- Create index "agent_online" to table: "agents"
CREATE INDEX `agent_online` ON `agents` (`online`);
-- Create index "agent_package_digest" to table: "agents"
CREATE INDEX `agent_package_digest` ON `agents` (`package_digest`);
-- Create "alert_rules" table
CREATE TABLE `alert_rules` (`id` text NOT NULL, `agent` text NOT NULL, `condition` text NOT NULL, `window` integer NOT NULL, `description` text NOT NULL DEFAULT (''), `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `updated_by` text NOT NULL, PRIMARY KEY (`id`));
-- Create "approvals" table
CREATE TABLE `approvals` (`id` text NOT NULL, `agent` text NOT NULL, `run` text NOT NULL, `thread` text NOT NULL DEFAULT (''), `run_id` text NOT NULL DEFAULT (''), `node` text NOT NULL, `ask` text NOT NULL DEFAULT (''), `show` text NOT NULL, `account` text NOT NULL DEFAULT (''), `digest` text NOT NULL, `rule_id` text NOT NULL DEFAULT (''), `state` text NOT NULL, `created_at` datetime NOT NULL, `decided_at` datetime NULL, `expires_at` datetime NULL, `say` text NOT NULL DEFAULT (''), `decision_digest` text NOT NULL DEFAULT (''), `decided_by` json NULL, `reason` text NOT NULL DEFAULT (''), `votes` json NULL, `delivered_at` datetime NULL, `traceparent` text NOT NULL DEFAULT (''), `decision_traceparent` text NOT NULL DEFAULT (''), PRIMARY KEY (`id`));
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
-- Create "audit_entries" table
CREATE TABLE `audit_entries` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `seq` integer NOT NULL, `at` datetime NOT NULL, `actor` text NOT NULL, `action` text NOT NULL, `subject` text NOT NULL DEFAULT (''), `detail` text NOT NULL DEFAULT ('{}'), `prev` text NOT NULL DEFAULT (''), `hash` text NOT NULL);
-- Create index "audit_entries_seq_key" to table: "audit_entries"
CREATE UNIQUE INDEX `audit_entries_seq_key` ON `audit_entries` (`seq`);
-- Create "conversations" table
CREATE TABLE `conversations` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `agent` text NOT NULL, `thread` text NOT NULL, `updated_at` datetime NOT NULL, `waiting` bool NOT NULL DEFAULT (false), `people` json NULL, `reported_at` datetime NOT NULL);
-- Create index "conversation_agent_thread" to table: "conversations"
CREATE UNIQUE INDEX `conversation_agent_thread` ON `conversations` (`agent`, `thread`);
-- Create "delegation_failures" table
CREATE TABLE `delegation_failures` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `agent` text NOT NULL, `run_id` text NOT NULL, `node` text NOT NULL DEFAULT (''), `target` text NOT NULL DEFAULT (''), `code` text NOT NULL, `message` text NOT NULL DEFAULT (''), `chain` json NULL, `invocation_id` text NOT NULL DEFAULT (''), `time` datetime NOT NULL);
-- Create index "delegationfailure_agent_time" to table: "delegation_failures"
CREATE INDEX `delegationfailure_agent_time` ON `delegation_failures` (`agent`, `time`);
-- Create index "delegationfailure_agent_code_time" to table: "delegation_failures"
CREATE INDEX `delegationfailure_agent_code_time` ON `delegation_failures` (`agent`, `code`, `time`);
-- Create "health_rounds" table
CREATE TABLE `health_rounds` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `agent` text NOT NULL, `status` text NOT NULL, `checks` blob NOT NULL, `started` datetime NOT NULL, `received` datetime NOT NULL);
-- Create index "healthround_agent_received" to table: "health_rounds"
CREATE INDEX `healthround_agent_received` ON `health_rounds` (`agent`, `received`);
-- Create index "healthround_received" to table: "health_rounds"
CREATE INDEX `healthround_received` ON `health_rounds` (`received`);
-- Create "package_chunks" table
CREATE TABLE `package_chunks` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `digest` text NOT NULL, `seq` integer NOT NULL, `data` blob NOT NULL);
-- Create index "packagechunk_digest_seq" to table: "package_chunks"
CREATE UNIQUE INDEX `packagechunk_digest_seq` ON `package_chunks` (`digest`, `seq`);
-- Create "package_scopes" table
CREATE TABLE `package_scopes` (`id` text NOT NULL, `publishers` json NULL, `threshold` integer NOT NULL DEFAULT (1), `set_by` text NOT NULL, `set_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- Create "package_versions" table
CREATE TABLE `package_versions` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `name` text NOT NULL, `scope` text NOT NULL, `version` text NOT NULL, `digest` text NOT NULL, `kind` text NOT NULL, `description` text NOT NULL DEFAULT (''), `size` integer NOT NULL, `files` integer NOT NULL, `manifest` blob NOT NULL, `envelope` blob NOT NULL, `signers` json NULL, `published_by` text NOT NULL, `published_at` datetime NOT NULL, `yanked_at` datetime NULL, `yanked_by` text NOT NULL DEFAULT (''), `yank_reason` text NOT NULL DEFAULT (''));
-- Create index "package_versions_digest_key" to table: "package_versions"
CREATE UNIQUE INDEX `package_versions_digest_key` ON `package_versions` (`digest`);
-- Create index "packageversion_name_version" to table: "package_versions"
CREATE UNIQUE INDEX `packageversion_name_version` ON `package_versions` (`name`, `version`);
-- Create index "packageversion_scope" to table: "package_versions"
CREATE INDEX `packageversion_scope` ON `package_versions` (`scope`);
-- Create "pair_codes" table
CREATE TABLE `pair_codes` (`id` text NOT NULL, `code_hash` text NOT NULL, `agent` text NOT NULL, `thread` text NOT NULL, `created_at` datetime NOT NULL, `expires_at` datetime NOT NULL, `wrong_tries` integer NOT NULL DEFAULT (0), `used_at` datetime NULL, PRIMARY KEY (`id`));
-- Create index "pair_codes_code_hash_key" to table: "pair_codes"
CREATE UNIQUE INDEX `pair_codes_code_hash_key` ON `pair_codes` (`code_hash`);
-- Create index "paircode_agent_thread" to table: "pair_codes"
CREATE INDEX `paircode_agent_thread` ON `pair_codes` (`agent`, `thread`);
-- Create "pairings" table
CREATE TABLE `pairings` (`id` text NOT NULL, `agent` text NOT NULL, `thread` text NOT NULL, `user_id` text NOT NULL, `email` text NOT NULL, `name` text NOT NULL DEFAULT (''), `created_at` datetime NOT NULL, `delivered_at` datetime NULL, PRIMARY KEY (`id`));
-- Create index "pairing_agent_delivered_at" to table: "pairings"
CREATE INDEX `pairing_agent_delivered_at` ON `pairings` (`agent`, `delivered_at`);
-- Create index "pairing_user_id" to table: "pairings"
CREATE INDEX `pairing_user_id` ON `pairings` (`user_id`);
-- Create "publisher_keys" table
CREATE TABLE `publisher_keys` (`id` text NOT NULL, `public_key` blob NOT NULL, `publisher` text NOT NULL, `added_by` text NOT NULL, `added_at` datetime NOT NULL, `revoked_at` datetime NULL, `revoked_by` text NOT NULL DEFAULT (''), `revoke_reason` text NOT NULL DEFAULT (''), PRIMARY KEY (`id`));
-- Create index "publisherkey_publisher" to table: "publisher_keys"
CREATE INDEX `publisherkey_publisher` ON `publisher_keys` (`publisher`);
-- Create "rules" table
CREATE TABLE `rules` (`id` text NOT NULL, `agent` text NOT NULL, `node` text NOT NULL, `role` text NOT NULL DEFAULT (''), `people` json NULL, `quorum` integer NOT NULL DEFAULT (1), `time_limit` integer NOT NULL DEFAULT (0), `require_reason` bool NOT NULL DEFAULT (false), `allow_self_approval` bool NOT NULL DEFAULT (false), `description` text NOT NULL DEFAULT (''), `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `updated_by` text NOT NULL, PRIMARY KEY (`id`));
-- Create index "rule_agent_node" to table: "rules"
CREATE UNIQUE INDEX `rule_agent_node` ON `rules` (`agent`, `node`);
-- Create "runs" table
CREATE TABLE `runs` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `agent` text NOT NULL, `run_id` text NOT NULL, `thread` text NOT NULL DEFAULT (''), `started_by` text NOT NULL DEFAULT (''), `started_by_who` text NOT NULL DEFAULT (''), `build` text NOT NULL DEFAULT (''), `state` text NOT NULL, `start_time` datetime NOT NULL, `end_time` datetime NULL, `duration_ns` integer NOT NULL DEFAULT (0), `step_count` integer NOT NULL DEFAULT (0), `tokens_input` integer NOT NULL DEFAULT (0), `tokens_output` integer NOT NULL DEFAULT (0), `tokens_cached` integer NOT NULL DEFAULT (0), `tokens_total` integer NOT NULL DEFAULT (0), `error` text NOT NULL DEFAULT (''), `pause` text NOT NULL DEFAULT (''), `paused_at` text NOT NULL DEFAULT (''), `approval_id` text NOT NULL DEFAULT (''), `input` blob NULL, `output` blob NULL, `withheld` json NULL, `steps_truncated` bool NOT NULL DEFAULT (false), `trigger` blob NULL, `parent_run_id` text NOT NULL DEFAULT (''), `parent_node` text NOT NULL DEFAULT (''), `invocation_id` text NOT NULL DEFAULT (''), `delegated_agent` text NOT NULL DEFAULT (''), `chain` json NULL, `seq` integer NOT NULL DEFAULT (0), `updated_at` datetime NOT NULL);
-- Create index "run_agent_run_id" to table: "runs"
CREATE UNIQUE INDEX `run_agent_run_id` ON `runs` (`agent`, `run_id`);
-- Create index "run_start_time" to table: "runs"
CREATE INDEX `run_start_time` ON `runs` (`start_time`);
-- Create index "run_agent_start_time" to table: "runs"
CREATE INDEX `run_agent_start_time` ON `runs` (`agent`, `start_time`);
-- Create index "run_state_start_time" to table: "runs"
CREATE INDEX `run_state_start_time` ON `runs` (`state`, `start_time`);
-- Create index "run_agent_thread_start_time" to table: "runs"
CREATE INDEX `run_agent_thread_start_time` ON `runs` (`agent`, `thread`, `start_time`);
-- Create index "run_end_time" to table: "runs"
CREATE INDEX `run_end_time` ON `runs` (`end_time`);
-- Create index "run_agent_parent_run_id_start_time" to table: "runs"
CREATE INDEX `run_agent_parent_run_id_start_time` ON `runs` (`agent`, `parent_run_id`, `start_time`);
-- Create "run_details" table
CREATE TABLE `run_details` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `run` integer NOT NULL, `steps` blob NOT NULL);
-- Create index "run_details_run_key" to table: "run_details"
CREATE UNIQUE INDEX `run_details_run_key` ON `run_details` (`run`);
-- Create "run_steps" table
CREATE TABLE `run_steps` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `run` integer NOT NULL, `seq` integer NOT NULL, `node` text NOT NULL DEFAULT (''), `kind` text NOT NULL DEFAULT (''), `copy` integer NOT NULL DEFAULT (-1), `start_time` datetime NULL, `duration_ns` integer NOT NULL DEFAULT (-1), `outcome` text NOT NULL DEFAULT (''), `error` text NOT NULL DEFAULT (''), `pause` text NOT NULL DEFAULT (''), `approval_id` text NOT NULL DEFAULT (''), `tokens_input` integer NOT NULL DEFAULT (0), `tokens_output` integer NOT NULL DEFAULT (0), `tokens_cached` integer NOT NULL DEFAULT (0), `tokens_total` integer NOT NULL DEFAULT (0));
-- Create index "runstep_run_seq" to table: "run_steps"
CREATE INDEX `runstep_run_seq` ON `run_steps` (`run`, `seq`);
-- Create "sessions" table
CREATE TABLE `sessions` (`id` text NOT NULL, `user_id` text NOT NULL, `csrf_hash` text NOT NULL, `source` text NOT NULL DEFAULT (''), `created_at` datetime NOT NULL, `expires_at` datetime NOT NULL, `ended_at` datetime NULL, PRIMARY KEY (`id`));
-- Create index "session_user_id" to table: "sessions"
CREATE INDEX `session_user_id` ON `sessions` (`user_id`);
-- Create "settings" table
CREATE TABLE `settings` (`id` text NOT NULL, `value` text NOT NULL DEFAULT (''), `updated_at` datetime NOT NULL, `updated_by` text NOT NULL DEFAULT (''), PRIMARY KEY (`id`));
-- Create "signing_keys" table
CREATE TABLE `signing_keys` (`id` text NOT NULL, `private_key` blob NOT NULL, `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- Create "tokens" table
CREATE TABLE `tokens` (`id` text NOT NULL, `kind` text NOT NULL, `name` text NOT NULL, `role` text NOT NULL DEFAULT (''), `issued_at` datetime NOT NULL, `expires_at` datetime NOT NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- Create index "token_revoked_at" to table: "tokens"
CREATE INDEX `token_revoked_at` ON `tokens` (`revoked_at`);
-- Create "users" table
CREATE TABLE `users` (`id` text NOT NULL, `email` text NOT NULL, `name` text NOT NULL DEFAULT (''), `role` text NOT NULL, `password_hash` text NOT NULL DEFAULT (''), `verify_hash` text NOT NULL DEFAULT (''), `disabled` bool NOT NULL DEFAULT (false), `setup_hash` text NOT NULL DEFAULT (''), `setup_expires_at` datetime NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- Create index "users_email_key" to table: "users"
CREATE UNIQUE INDEX `users_email_key` ON `users` (`email`);
-- Create "verifications" table
CREATE TABLE `verifications` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `agent` text NOT NULL, `email` text NOT NULL, `user_id` text NOT NULL, `at` datetime NOT NULL);
-- Create index "verification_agent_email" to table: "verifications"
CREATE UNIQUE INDEX `verification_agent_email` ON `verifications` (`agent`, `email`);
-- Create "votes" table
CREATE TABLE `votes` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `approval_id` text NOT NULL, `person` text NOT NULL, `reason` text NOT NULL DEFAULT (''), `at` datetime NOT NULL);
-- Create index "vote_approval_id_person" to table: "votes"
CREATE UNIQUE INDEX `vote_approval_id_person` ON `votes` (`approval_id`, `person`);
