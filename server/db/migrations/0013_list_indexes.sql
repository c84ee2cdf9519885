-- Board lists stay fast at any size: an index per sort (partial on unmerged posts, with status_id
-- carried so a status filter reads the index alone), a stored trending key, and exact per-board and
-- per-status post counts kept by a trigger so `total` is never a scan.

-- Trending decays each vote by half per day of the post's age. Exponential decay keeps the order of
-- two posts the same at every moment, so it can be stored and indexed: ln(votes) + age-free term.
ALTER TABLE "posts" ADD COLUMN "trending" double precision GENERATED ALWAYS AS (
  CASE WHEN vote_count > 0 THEN ln(vote_count) + extract(epoch from (created_at AT TIME ZONE 'UTC'))::double precision * (ln(2) / 86400) END
) STORED;
--> statement-breakpoint
CREATE INDEX "posts_list_new_idx" ON "posts" USING btree ("board_id", "created_at" DESC, "id" DESC) INCLUDE ("status_id") WHERE merged_into_id IS NULL;
--> statement-breakpoint
CREATE INDEX "posts_list_top_idx" ON "posts" USING btree ("board_id", "vote_count" DESC, "created_at" DESC, "id" DESC) INCLUDE ("status_id") WHERE merged_into_id IS NULL;
--> statement-breakpoint
CREATE INDEX "posts_list_trending_idx" ON "posts" USING btree ("board_id", "trending" DESC NULLS LAST, "created_at" DESC, "id" DESC) INCLUDE ("status_id") WHERE merged_into_id IS NULL;
--> statement-breakpoint
CREATE TABLE "board_post_counts" (
  "board_id" text NOT NULL REFERENCES "boards"("id") ON DELETE CASCADE,
  "status_id" text NOT NULL REFERENCES "statuses"("id") ON DELETE CASCADE,
  "posts" integer NOT NULL DEFAULT 0,
  PRIMARY KEY ("board_id", "status_id")
);
--> statement-breakpoint
INSERT INTO "board_post_counts" ("board_id", "status_id", "posts")
  SELECT board_id, status_id, count(*) FROM posts WHERE merged_into_id IS NULL GROUP BY board_id, status_id;
--> statement-breakpoint
-- Runs at commit (deferred), so concurrent posts on one board hold the counter row only for the commit itself.
CREATE FUNCTION chorus_count_board_posts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.board_id = NEW.board_id AND OLD.status_id = NEW.status_id
     AND (OLD.merged_into_id IS NULL) = (NEW.merged_into_id IS NULL) THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.merged_into_id IS NULL THEN
    UPDATE board_post_counts SET posts = posts - 1 WHERE board_id = OLD.board_id AND status_id = OLD.status_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.merged_into_id IS NULL THEN
    INSERT INTO board_post_counts AS c (board_id, status_id, posts) VALUES (NEW.board_id, NEW.status_id, 1)
      ON CONFLICT (board_id, status_id) DO UPDATE SET posts = c.posts + 1;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER posts_count_board_posts AFTER INSERT OR DELETE OR UPDATE OF board_id, status_id, merged_into_id ON posts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION chorus_count_board_posts();
