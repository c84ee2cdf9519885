-- A label filter on a board list walks the sort's index until it has counted its 200 matches
-- (docs/api.md#lists-and-paging): 2,000 posts for a label on one post in ten. Probing post_labels for
-- each cost three index pages a post (6,000 buffers a request at 100,000 posts). Each post now carries
-- its label ids, kept by triggers on post_labels, and the list indexes carry them too, so the filter is
-- read from the index entry the walk is already on (31 buffers for the same request).
ALTER TABLE "posts" ADD COLUMN "label_ids" text[] NOT NULL DEFAULT '{}';
--> statement-breakpoint
UPDATE "posts" p SET "label_ids" = l.ids
  FROM (SELECT post_id, array_agg(label_id ORDER BY label_id COLLATE "C") AS ids FROM post_labels GROUP BY post_id) l
  WHERE l.post_id = p.id;
--> statement-breakpoint
-- Once per statement, for the posts whose rows it added or removed; a post already carrying that set
-- (createPost writes it with the post) is left alone, so no second row version is written.
-- post_labels rows are only ever inserted and deleted, never updated.
CREATE FUNCTION chorus_sync_post_label_ids() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE posts p SET label_ids = fresh.ids
  FROM (
    SELECT c.post_id, coalesce((SELECT array_agg(pl.label_id ORDER BY pl.label_id COLLATE "C") FROM post_labels pl WHERE pl.post_id = c.post_id), '{}') AS ids
    FROM (SELECT DISTINCT post_id FROM changed) c
  ) fresh
  WHERE p.id = fresh.post_id AND NOT (p.label_ids @> fresh.ids AND p.label_ids <@ fresh.ids);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "post_labels_added" AFTER INSERT ON "post_labels" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION chorus_sync_post_label_ids();
--> statement-breakpoint
CREATE TRIGGER "post_labels_removed" AFTER DELETE ON "post_labels" REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION chorus_sync_post_label_ids();
--> statement-breakpoint
DROP INDEX "posts_list_new_idx";
--> statement-breakpoint
CREATE INDEX "posts_list_new_idx" ON "posts" USING btree ("board_id", "created_at" DESC, "id" DESC) INCLUDE ("status_id", "label_ids") WHERE merged_into_id IS NULL;
--> statement-breakpoint
DROP INDEX "posts_list_top_idx";
--> statement-breakpoint
CREATE INDEX "posts_list_top_idx" ON "posts" USING btree ("board_id", "vote_count" DESC, "created_at" DESC, "id" DESC) INCLUDE ("status_id", "label_ids") WHERE merged_into_id IS NULL;
--> statement-breakpoint
DROP INDEX "posts_list_trending_idx";
--> statement-breakpoint
CREATE INDEX "posts_list_trending_idx" ON "posts" USING btree ("board_id", "trending" DESC NULLS LAST, "created_at" DESC, "id" DESC) INCLUDE ("status_id", "label_ids") WHERE merged_into_id IS NULL;
