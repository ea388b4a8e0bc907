-- Create "action_link_uses" table
CREATE TABLE `action_link_uses` (`id` text NOT NULL, `approval_id` text NOT NULL, `person` text NOT NULL, `used_at` datetime NOT NULL, `expires_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- Create index "actionlinkuse_expires_at" to table: "action_link_uses"
CREATE INDEX `actionlinkuse_expires_at` ON `action_link_uses` (`expires_at`);
