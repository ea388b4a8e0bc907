-- Modify "agents" table
ALTER TABLE "agents" ADD COLUMN "board" character varying NOT NULL DEFAULT '';
-- Create "board_leases" table
CREATE TABLE "board_leases" ("id" character varying NOT NULL, "started_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
