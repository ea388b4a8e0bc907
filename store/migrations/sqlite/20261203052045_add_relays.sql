-- Create "relays" table
CREATE TABLE `relays` (`id` text NOT NULL, `agent` text NOT NULL, `board` text NOT NULL, `request_id` text NOT NULL, `request` blob NOT NULL, `within_ms` integer NOT NULL, `created_at` datetime NOT NULL, `claimed` bool NOT NULL DEFAULT (false), `answered` bool NOT NULL DEFAULT (false), `answer` blob NULL, `code` integer NOT NULL DEFAULT (0), `message` text NOT NULL DEFAULT (''), PRIMARY KEY (`id`));
-- Create index "relay_board_claimed" to table: "relays"
CREATE INDEX `relay_board_claimed` ON `relays` (`board`, `claimed`);
-- Create index "relay_created_at" to table: "relays"
CREATE INDEX `relay_created_at` ON `relays` (`created_at`);
