CREATE TABLE "integrations" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE CASCADE,
	"provider" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"status_reason" text,
	"external_id" text,
	"external_name" text,
	"scopes" text,
	"access_token" text NOT NULL,
	"refresh_token" text,
	"expires_at" timestamp with time zone,
	"connected_by_user_id" text REFERENCES "users"("id") ON DELETE SET NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "integrations_workspace_provider_key" ON "integrations" ("workspace_id","provider");
--> statement-breakpoint
CREATE TABLE "chat_channel_mappings" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE CASCADE,
	"integration_id" text NOT NULL REFERENCES "integrations"("id") ON DELETE CASCADE,
	"channel_id" text NOT NULL,
	"board_id" text REFERENCES "boards"("id") ON DELETE CASCADE,
	"events" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "chat_channel_mappings_workspace_idx" ON "chat_channel_mappings" ("workspace_id");
--> statement-breakpoint
CREATE TABLE "chat_deliveries" (
	"mapping_id" text NOT NULL REFERENCES "chat_channel_mappings"("id") ON DELETE CASCADE,
	"event_id" text NOT NULL REFERENCES "events"("id") ON DELETE CASCADE,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_owner" integer,
	"lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chat_deliveries_mapping_id_event_id_pk" PRIMARY KEY("mapping_id","event_id")
);
--> statement-breakpoint
CREATE INDEX "chat_deliveries_due_idx" ON "chat_deliveries" ("next_attempt_at") WHERE status = 'pending';
--> statement-breakpoint
CREATE TABLE "chat_delivery_logs" (
	"id" text PRIMARY KEY NOT NULL,
	"mapping_id" text NOT NULL REFERENCES "chat_channel_mappings"("id") ON DELETE CASCADE,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"attempt" integer NOT NULL,
	"success" boolean NOT NULL,
	"error" text,
	"duration_ms" integer NOT NULL,
	"sent_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "chat_delivery_logs_mapping_created_idx" ON "chat_delivery_logs" ("mapping_id","created_at");
--> statement-breakpoint
CREATE TABLE "tracker_webhook_deliveries" (
	"delivery_id" text PRIMARY KEY NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "tracker_issue" jsonb;
--> statement-breakpoint
CREATE INDEX "posts_tracker_issue_idx" ON "posts" (("tracker_issue"->>'id')) WHERE "tracker_issue" IS NOT NULL;
