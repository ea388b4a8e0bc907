-- Modify "approvals" table
ALTER TABLE "approvals" ADD COLUMN "escalation_level" bigint NOT NULL DEFAULT 0;
-- Modify "rules" table
ALTER TABLE "rules" ADD COLUMN "escalation" jsonb NULL;
