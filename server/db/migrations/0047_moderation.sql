-- Moderation (issue 36, docs/moderation.md): held posts, the signals the spam score counts
-- bursts from, and blocked writers. Every address, domain and IP is stored as an HMAC under SECRET_KEY.
ALTER TABLE "posts" ADD COLUMN "moderation" text CHECK ("moderation" IN ('held'));--> statement-breakpoint
CREATE INDEX "posts_held_idx" ON "posts" ("workspace_id", "created_at" DESC, "id" DESC) WHERE "moderation" IS NOT NULL;--> statement-breakpoint
-- One row per scored end-user write: what the score saw (hashed) and what it gave. Bursts count these rows.
CREATE TABLE "moderation_checks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE cascade,
	"post_id" text REFERENCES "posts"("id") ON DELETE cascade,
	"ip_hash" text,
	"email_hash" text,
	"domain_hash" text,
	"text_hash" text NOT NULL,
	"score" integer NOT NULL,
	"reasons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "moderation_checks_ip_idx" ON "moderation_checks" ("workspace_id", "ip_hash", "created_at");--> statement-breakpoint
CREATE INDEX "moderation_checks_email_idx" ON "moderation_checks" ("workspace_id", "email_hash", "created_at");--> statement-breakpoint
CREATE INDEX "moderation_checks_domain_idx" ON "moderation_checks" ("workspace_id", "domain_hash", "created_at");--> statement-breakpoint
CREATE INDEX "moderation_checks_text_idx" ON "moderation_checks" ("workspace_id", "text_hash", "created_at");--> statement-breakpoint
CREATE INDEX "moderation_checks_post_idx" ON "moderation_checks" ("post_id");--> statement-breakpoint
CREATE TABLE "moderation_blocks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE cascade,
	"kind" text NOT NULL CHECK ("kind" IN ('email', 'domain', 'ip')),
	"value_hash" text NOT NULL,
	"hint" text NOT NULL,
	"note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE UNIQUE INDEX "moderation_blocks_value_idx" ON "moderation_blocks" ("workspace_id", "kind", "value_hash");--> statement-breakpoint
-- A held post is not on its board yet: the maintained counts and the page walk leave it out like a merged one.
CREATE OR REPLACE FUNCTION chorus_count_board_posts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.board_id = NEW.board_id AND OLD.status_id = NEW.status_id
     AND (OLD.merged_into_id IS NULL AND OLD.moderation IS NULL) = (NEW.merged_into_id IS NULL AND NEW.moderation IS NULL) THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.merged_into_id IS NULL AND OLD.moderation IS NULL THEN
    UPDATE board_post_counts SET posts = posts - 1 WHERE board_id = OLD.board_id AND status_id = OLD.status_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.merged_into_id IS NULL AND NEW.moderation IS NULL THEN
    INSERT INTO board_post_counts AS c (board_id, status_id, posts) VALUES (NEW.board_id, NEW.status_id, 1)
      ON CONFLICT (board_id, status_id) DO UPDATE SET posts = c.posts + 1;
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
DROP TRIGGER "posts_count_board_posts" ON "posts";--> statement-breakpoint
CREATE CONSTRAINT TRIGGER posts_count_board_posts AFTER INSERT OR DELETE OR UPDATE OF board_id, status_id, merged_into_id, moderation ON posts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION chorus_count_board_posts();--> statement-breakpoint
CREATE OR REPLACE FUNCTION chorus_post_page(list_board text, list_status text, list_sort text, page_limit int, page_offset int) RETURNS text[] LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF list_sort = 'top' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND moderation IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY vote_count DESC, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'trending' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND moderation IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY trending DESC NULLS LAST, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'mrr' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND moderation IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY demand_mrr DESC, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'companies' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND moderation IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY demand_companies DESC, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'score' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND moderation IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY score DESC NULLS LAST, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  END IF;
  RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND moderation IS NULL AND (list_status IS NULL OR status_id = list_status)
    ORDER BY created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
END $$;
