-- Create "agent_builds" table
CREATE TABLE `agent_builds` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `agent` text NOT NULL, `build` text NOT NULL, `package_name` text NOT NULL DEFAULT (''), `package_version` text NOT NULL DEFAULT (''), `first_seen` datetime NOT NULL, `last_seen` datetime NOT NULL);
-- Create index "agentbuild_agent_build" to table: "agent_builds"
CREATE UNIQUE INDEX `agentbuild_agent_build` ON `agent_builds` (`agent`, `build`);
-- Create index "agentbuild_agent_last_seen" to table: "agent_builds"
CREATE INDEX `agentbuild_agent_last_seen` ON `agent_builds` (`agent`, `last_seen`);
