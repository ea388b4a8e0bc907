-- Create "action_link_uses" table
CREATE TABLE "action_link_uses" ("id" character varying NOT NULL, "approval_id" character varying NOT NULL, "person" character varying NOT NULL, "used_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- Create index "actionlinkuse_expires_at" to table: "action_link_uses"
CREATE INDEX "actionlinkuse_expires_at" ON "action_link_uses" ("expires_at");
