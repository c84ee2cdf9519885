-- The team's inbox (issue 33): one list across a workspace's boards, members' saved views and
-- per-member read state.
--
-- The inbox walks a workspace's unmerged posts in one of the list's orders; each order gets the
-- board list's index shape with the workspace in front of the board (posts_list_*_idx serve a
-- board filter), carrying the columns the inbox filters on so most filters read the index entry.
CREATE INDEX "posts_inbox_new_idx" ON "posts" ("workspace_id", "created_at" DESC, "id" DESC) INCLUDE ("board_id", "status_id", "owner_user_id", "label_ids") WHERE "merged_into_id" IS NULL;--> statement-breakpoint
CREATE INDEX "posts_inbox_top_idx" ON "posts" ("workspace_id", "vote_count" DESC, "created_at" DESC, "id" DESC) INCLUDE ("board_id", "status_id", "owner_user_id", "label_ids") WHERE "merged_into_id" IS NULL;--> statement-breakpoint
CREATE INDEX "posts_inbox_trending_idx" ON "posts" ("workspace_id", "trending" DESC NULLS LAST, "created_at" DESC, "id" DESC) INCLUDE ("board_id", "status_id", "owner_user_id", "label_ids") WHERE "merged_into_id" IS NULL;--> statement-breakpoint
-- A saved inbox view: a member's own (`user_id`, not shared) or shared with the workspace. Views a key
-- makes have no member (`user_id` null) and are always shared.
CREATE TABLE "saved_views" (
  "id" text PRIMARY KEY NOT NULL,
  "workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE CASCADE,
  "user_id" text REFERENCES "users"("id") ON DELETE CASCADE,
  "name" text NOT NULL,
  "filters" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "shared" boolean NOT NULL DEFAULT false,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);--> statement-breakpoint
CREATE INDEX "saved_views_workspace_idx" ON "saved_views" ("workspace_id", "created_at");--> statement-breakpoint
-- When a member last opened a post: the post is unread for them when it changed or got a comment since.
CREATE TABLE "post_reads" (
  "user_id" text NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "post_id" text NOT NULL REFERENCES "posts"("id") ON DELETE CASCADE,
  "workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE CASCADE,
  "read_at" timestamp with time zone NOT NULL DEFAULT now(),
  PRIMARY KEY ("user_id", "post_id")
);--> statement-breakpoint
CREATE INDEX "post_reads_post_idx" ON "post_reads" ("post_id");
