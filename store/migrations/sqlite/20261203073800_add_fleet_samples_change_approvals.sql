-- Create index "approval_decided_at_state_created_at" to table: "approvals"
CREATE INDEX `approval_decided_at_state_created_at` ON `approvals` (`decided_at`, `state`, `created_at`);
-- Create "fleet_samples" table
CREATE TABLE `fleet_samples` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `resolution` text NOT NULL, `at` datetime NOT NULL, `minutes` integer NOT NULL DEFAULT (1), `agents_online` integer NOT NULL DEFAULT (0), `approvals_pending` integer NOT NULL DEFAULT (0), `health_ok` integer NOT NULL DEFAULT (0), `health_degraded` integer NOT NULL DEFAULT (0), `health_unknown` integer NOT NULL DEFAULT (0), `health_none` integer NOT NULL DEFAULT (0), `decisions` integer NOT NULL DEFAULT (0), `latency_p50_ms` integer NOT NULL DEFAULT (0), `latency_p99_ms` integer NOT NULL DEFAULT (0), `runs_started` integer NOT NULL DEFAULT (0), `runs_ended` integer NOT NULL DEFAULT (0), `runs_failed` integer NOT NULL DEFAULT (0));
-- Create index "fleetsample_resolution_at" to table: "fleet_samples"
CREATE UNIQUE INDEX `fleetsample_resolution_at` ON `fleet_samples` (`resolution`, `at`);
