-- Rate-limit counters every server process shares when there is no Redis (server/lib/rate-limit.ts).
-- UNLOGGED: a counter bump writes no WAL, and a crash merely resets the windows.
CREATE UNLOGGED TABLE "rate_limit_counters" (
	"key" text NOT NULL,
	"window" bigint NOT NULL,
	"count" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "rate_limit_counters_key_window_pk" PRIMARY KEY("key","window")
);
--> statement-breakpoint
CREATE INDEX "rate_limit_counters_expires_idx" ON "rate_limit_counters" USING btree ("expires_at");
