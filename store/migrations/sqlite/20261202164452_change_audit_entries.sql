-- Disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- Create "new_audit_entries" table
CREATE TABLE `new_audit_entries` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `seq` integer NULL, `at` datetime NOT NULL, `actor` text NOT NULL, `action` text NOT NULL, `subject` text NOT NULL DEFAULT (''), `detail` text NOT NULL DEFAULT ('{}'), `content` text NOT NULL DEFAULT (''), `prev` text NOT NULL DEFAULT (''), `hash` text NOT NULL DEFAULT (''));
-- Copy rows from old table "audit_entries" to new temporary table "new_audit_entries"
INSERT INTO `new_audit_entries` (`id`, `seq`, `at`, `actor`, `action`, `subject`, `detail`, `prev`, `hash`) SELECT `id`, `seq`, `at`, `actor`, `action`, `subject`, `detail`, `prev`, IFNULL(`hash`, ('')) AS `hash` FROM `audit_entries`;
-- Drop "audit_entries" table after copying rows
DROP TABLE `audit_entries`;
-- Rename temporary table "new_audit_entries" to "audit_entries"
ALTER TABLE `new_audit_entries` RENAME TO `audit_entries`;
-- Create index "audit_entries_seq_key" to table: "audit_entries"
CREATE UNIQUE INDEX `audit_entries_seq_key` ON `audit_entries` (`seq`);
-- Enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
