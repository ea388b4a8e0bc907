-- Modify "approvals" table
ALTER TABLE "approvals" ADD COLUMN "receipt" character varying NOT NULL DEFAULT '';
-- Create "receipt_keys" table
CREATE TABLE "receipt_keys" ("id" character varying NOT NULL, "private_key" bytea NOT NULL, "not_before" timestamptz NOT NULL, "retired_at" timestamptz NULL, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
