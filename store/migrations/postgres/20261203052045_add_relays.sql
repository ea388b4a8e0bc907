-- Create "relays" table
CREATE TABLE "relays" ("id" character varying NOT NULL, "agent" character varying NOT NULL, "board" character varying NOT NULL, "request_id" character varying NOT NULL, "request" bytea NOT NULL, "within_ms" bigint NOT NULL, "created_at" timestamptz NOT NULL, "claimed" boolean NOT NULL DEFAULT false, "answered" boolean NOT NULL DEFAULT false, "answer" bytea NULL, "code" bigint NOT NULL DEFAULT 0, "message" character varying NOT NULL DEFAULT '', PRIMARY KEY ("id"));
-- Create index "relay_board_claimed" to table: "relays"
CREATE INDEX "relay_board_claimed" ON "relays" ("board", "claimed");
-- Create index "relay_created_at" to table: "relays"
CREATE INDEX "relay_created_at" ON "relays" ("created_at");
