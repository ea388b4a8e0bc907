-- Modify "approvals" table
ALTER TABLE "approvals" ADD COLUMN "consent_id" character varying NOT NULL DEFAULT '';
-- Modify "rules" table
ALTER TABLE "rules" ADD COLUMN "no_standing_consent" boolean NOT NULL DEFAULT false, ADD COLUMN "standing_consent_max_amount" double precision NOT NULL DEFAULT 0;
-- Create "consents" table
CREATE TABLE "consents" ("id" character varying NOT NULL, "agent" character varying NOT NULL, "digest" character varying NOT NULL, "rule_id" character varying NOT NULL, "approval_id" character varying NOT NULL, "created_by" character varying NOT NULL, "created_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, "uses_allowed" bigint NOT NULL, "uses" bigint NOT NULL DEFAULT 0, "revoked_at" timestamptz NULL, "revoked_by" character varying NOT NULL DEFAULT '', PRIMARY KEY ("id"));
-- Create index "consent_agent_digest" to table: "consents"
CREATE INDEX "consent_agent_digest" ON "consents" ("agent", "digest");
-- Create index "consent_created_at_id" to table: "consents"
CREATE INDEX "consent_created_at_id" ON "consents" ("created_at", "id");
