-- Create "notifications" table
CREATE TABLE `notifications` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `approval_id` text NOT NULL, `event` text NOT NULL, `target` text NOT NULL, `body` blob NOT NULL, `created_at` datetime NOT NULL, `next_at` datetime NOT NULL, `attempts` integer NOT NULL DEFAULT (0), `sent_at` datetime NULL, `failed` bool NOT NULL DEFAULT (false), `last_error` text NOT NULL DEFAULT (''));
-- Create index "notification_sent_at_failed_next_at" to table: "notifications"
CREATE INDEX `notification_sent_at_failed_next_at` ON `notifications` (`sent_at`, `failed`, `next_at`);
-- Create index "notification_approval_id" to table: "notifications"
CREATE INDEX `notification_approval_id` ON `notifications` (`approval_id`);
