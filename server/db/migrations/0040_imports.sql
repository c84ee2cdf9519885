-- Imports from other feedback tools (issue 39, docs/import.md). An import is a leased background job:
-- `state` is pending until it ends done or failed; the worker that runs it holds `lease_owner` (its
-- advisory-lock owner number, server/background/leases.ts) until `lease_until`, and commits every batch
-- of rows together with `checkpoint` and `counts`, so a crash resumes from the last committed batch.
CREATE TABLE "imports" (
  "id" text PRIMARY KEY NOT NULL,
  "workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE CASCADE,
  "format" text NOT NULL,
  "state" text NOT NULL DEFAULT 'pending',
  "files" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "options" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "bytes_total" bigint NOT NULL DEFAULT 0,
  "checkpoint" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "counts" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "errors" jsonb NOT NULL DEFAULT '[]'::jsonb,
  "error_count" integer NOT NULL DEFAULT 0,
  "failure" text,
  "attempts" integer NOT NULL DEFAULT 0,
  "lease_owner" integer,
  "lease_until" timestamp with time zone,
  "created_by_user_id" text REFERENCES "users"("id") ON DELETE SET NULL,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "started_at" timestamp with time zone,
  "finished_at" timestamp with time zone
);--> statement-breakpoint
CREATE INDEX "imports_workspace_idx" ON "imports" ("workspace_id", "created_at");--> statement-breakpoint
CREATE INDEX "imports_pending_idx" ON "imports" ("created_at") WHERE "state" = 'pending';--> statement-breakpoint
-- Which local row each source id became (or was merged into): a second run of the same file finds
-- every row here and creates nothing. `source` is the format, `kind` the entity (post, comment, user, ...).
CREATE TABLE "external_refs" (
  "workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE CASCADE,
  "source" text NOT NULL,
  "kind" text NOT NULL,
  "external_id" text NOT NULL,
  "local_id" text NOT NULL,
  "import_id" text,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  PRIMARY KEY ("workspace_id", "source", "kind", "external_id")
);--> statement-breakpoint
CREATE TRIGGER imports_notify_work AFTER INSERT ON imports FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work();
