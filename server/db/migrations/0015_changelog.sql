-- Changelog entries, the posts they ship, the per-recipient mail record and changelog unsubscribes.
-- Every table names its workspace with ON DELETE CASCADE, so erasing a workspace leaves nothing behind.
CREATE TABLE "changelog_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"body_html" text NOT NULL,
	"published_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "changelog_entries" ADD CONSTRAINT "changelog_entries_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "changelog_entries_workspace_published_idx" ON "changelog_entries" USING btree ("workspace_id","published_at","id");
--> statement-breakpoint
CREATE TABLE "changelog_posts" (
	"entry_id" text NOT NULL,
	"post_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	CONSTRAINT "changelog_posts_entry_id_post_id_pk" PRIMARY KEY("entry_id","post_id")
);
--> statement-breakpoint
ALTER TABLE "changelog_posts" ADD CONSTRAINT "changelog_posts_entry_id_changelog_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."changelog_entries"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "changelog_posts" ADD CONSTRAINT "changelog_posts_post_id_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."posts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "changelog_posts" ADD CONSTRAINT "changelog_posts_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "changelog_posts_post_idx" ON "changelog_posts" USING btree ("post_id");
--> statement-breakpoint
CREATE TABLE "changelog_emails" (
	"entry_id" text NOT NULL,
	"end_user_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_until" timestamp with time zone,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "changelog_emails_entry_id_end_user_id_pk" PRIMARY KEY("entry_id","end_user_id")
);
--> statement-breakpoint
ALTER TABLE "changelog_emails" ADD CONSTRAINT "changelog_emails_entry_id_changelog_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."changelog_entries"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "changelog_emails" ADD CONSTRAINT "changelog_emails_end_user_id_end_users_id_fk" FOREIGN KEY ("end_user_id") REFERENCES "public"."end_users"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "changelog_emails" ADD CONSTRAINT "changelog_emails_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "changelog_emails_pending_idx" ON "changelog_emails" USING btree ("status") WHERE status = 'pending';
--> statement-breakpoint
CREATE TABLE "changelog_subscriptions" (
	"end_user_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"token" text NOT NULL,
	"unsubscribed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "changelog_subscriptions" ADD CONSTRAINT "changelog_subscriptions_end_user_id_end_users_id_fk" FOREIGN KEY ("end_user_id") REFERENCES "public"."end_users"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "changelog_subscriptions" ADD CONSTRAINT "changelog_subscriptions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "changelog_subscriptions_token_key" ON "changelog_subscriptions" USING btree ("token");
