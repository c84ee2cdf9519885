-- Document frequencies for the similarity formula's idf (issue 36, modules/duplicates/similarity.ts):
-- how many unmerged posts of a workspace hold each search lexeme, read with one index lookup per term
-- instead of counting matching posts on every call. Writes never wait on each other: the triggers only
-- append signed deltas (set-wise, a statement at a time), and the background worker folds them into
-- `post_term_counts` (duplicates/term-counts.ts). A reader sums both, so the figure is exact at any moment.
CREATE TABLE "post_term_counts" (
	"workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE cascade,
	"lexeme" text NOT NULL,
	"posts" integer NOT NULL,
	PRIMARY KEY ("workspace_id", "lexeme")
);--> statement-breakpoint
CREATE TABLE "post_term_deltas" (
	"workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE cascade,
	"lexeme" text NOT NULL,
	"posts" integer NOT NULL
);--> statement-breakpoint
CREATE INDEX "post_term_deltas_lexeme_idx" ON "post_term_deltas" ("workspace_id", "lexeme");--> statement-breakpoint
INSERT INTO "post_term_counts" ("workspace_id", "lexeme", "posts")
  SELECT p.workspace_id, t.lexeme, count(*) FROM posts p, unnest(tsvector_to_array(p.search)) t(lexeme)
  WHERE p.merged_into_id IS NULL GROUP BY 1, 2;--> statement-breakpoint
-- Inserts and deletes, a statement at a time (both triggers name their transition table `changed_posts`).
-- A workspace being deleted is already gone from `workspaces` when the cascade deletes its posts: they
-- leave no deltas (which the foreign key would refuse).
CREATE FUNCTION chorus_post_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO post_term_deltas (workspace_id, lexeme, posts)
    SELECT c.workspace_id, t.lexeme, count(*) * CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END
    FROM changed_posts c, unnest(tsvector_to_array(c.search)) t(lexeme)
    WHERE c.merged_into_id IS NULL AND EXISTS (SELECT 1 FROM workspaces w WHERE w.id = c.workspace_id) GROUP BY 1, 2;
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- An edit or a merge: the old terms out, the new in; the lexemes both hold cancel.
CREATE FUNCTION chorus_post_terms_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO post_term_deltas (workspace_id, lexeme, posts)
    SELECT d.workspace_id, d.lexeme, sum(d.posts) FROM (
      SELECT OLD.workspace_id, t, -1 FROM unnest(tsvector_to_array(OLD.search)) t WHERE OLD.merged_into_id IS NULL
      UNION ALL SELECT NEW.workspace_id, t, 1 FROM unnest(tsvector_to_array(NEW.search)) t WHERE NEW.merged_into_id IS NULL
    ) d(workspace_id, lexeme, posts) GROUP BY 1, 2 HAVING sum(d.posts) <> 0;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER posts_term_counts_insert AFTER INSERT ON posts REFERENCING NEW TABLE AS changed_posts
  FOR EACH STATEMENT EXECUTE FUNCTION chorus_post_terms_changed();--> statement-breakpoint
CREATE TRIGGER posts_term_counts_delete AFTER DELETE ON posts REFERENCING OLD TABLE AS changed_posts
  FOR EACH STATEMENT EXECUTE FUNCTION chorus_post_terms_changed();--> statement-breakpoint
-- Row by row with a WHEN, so the many updates that touch neither (votes, status, trending) cost a comparison.
CREATE TRIGGER posts_term_counts_update AFTER UPDATE ON posts FOR EACH ROW
  WHEN (OLD.search IS DISTINCT FROM NEW.search OR (OLD.merged_into_id IS NULL) <> (NEW.merged_into_id IS NULL) OR OLD.workspace_id <> NEW.workspace_id)
  EXECUTE FUNCTION chorus_post_terms_updated();
