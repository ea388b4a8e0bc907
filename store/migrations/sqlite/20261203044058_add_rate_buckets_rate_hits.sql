-- Create "rate_buckets" table
CREATE TABLE `rate_buckets` (`id` text NOT NULL, `tokens` real NOT NULL, `at` datetime NOT NULL, PRIMARY KEY (`id`));
-- Create "rate_hits" table
CREATE TABLE `rate_hits` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `limiter` text NOT NULL, `key` text NOT NULL, `at` datetime NOT NULL);
-- Create index "ratehit_limiter_key_at" to table: "rate_hits"
CREATE INDEX `ratehit_limiter_key_at` ON `rate_hits` (`limiter`, `key`, `at`);
-- Create index "ratehit_at" to table: "rate_hits"
CREATE INDEX `ratehit_at` ON `rate_hits` (`at`);
