-- The duplicate-suggestion step leaves the create request (issue 36): the dispatcher's fan-out queues one
-- row per new post here (duplicates/queue.ts), and the background worker's suggester loop works the queue
-- off (server/background/suggester.ts). One row per post, so a re-dispatched event queues nothing twice.
CREATE TABLE "duplicate_checks" (
	"post_id" text PRIMARY KEY NOT NULL REFERENCES "posts"("id") ON DELETE cascade,
	"workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE cascade,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "duplicate_checks_created_idx" ON "duplicate_checks" ("created_at");--> statement-breakpoint
CREATE TRIGGER duplicate_checks_notify_work AFTER INSERT ON duplicate_checks FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work();
