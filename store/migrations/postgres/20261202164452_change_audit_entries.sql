-- Modify "audit_entries" table
ALTER TABLE "audit_entries" ALTER COLUMN "seq" DROP NOT NULL, ALTER COLUMN "hash" SET DEFAULT '', ADD COLUMN "content" character varying NOT NULL DEFAULT '';
