-- One term-count delta row per post instead of one per lexeme (issue 36, BENCHMARKS.md "Creates: one
-- statement, one delta row"): a create's trigger wrote ~40 rows with ~40 index entries into
-- post_term_deltas, the largest cost of a create after the row itself. A delta now holds the post's
-- lexemes as an array with its sign; the worker's fold unnests them (duplicates/term-counts.ts), and a
-- reader unnests the few deltas not folded yet (the fold runs before every duplicate check).
ALTER TABLE "post_term_deltas" ADD COLUMN "lexemes" text[];--> statement-breakpoint
UPDATE "post_term_deltas" SET "lexemes" = ARRAY["lexeme"];--> statement-breakpoint
ALTER TABLE "post_term_deltas" ALTER COLUMN "lexemes" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "post_term_deltas" DROP COLUMN "lexeme";--> statement-breakpoint
CREATE INDEX "post_term_deltas_workspace_idx" ON "post_term_deltas" ("workspace_id");--> statement-breakpoint
CREATE OR REPLACE FUNCTION chorus_post_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO post_term_deltas (workspace_id, lexemes, posts)
    SELECT c.workspace_id, tsvector_to_array(c.search), CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END
    FROM changed_posts c
    WHERE c.merged_into_id IS NULL AND c.search <> ''::tsvector AND EXISTS (SELECT 1 FROM workspaces w WHERE w.id = c.workspace_id);
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- An edit or a merge: the old terms out, the new in (the fold sums both).
CREATE OR REPLACE FUNCTION chorus_post_terms_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO post_term_deltas (workspace_id, lexemes, posts)
    SELECT OLD.workspace_id, tsvector_to_array(OLD.search), -1 WHERE OLD.merged_into_id IS NULL AND OLD.search <> ''::tsvector
    UNION ALL SELECT NEW.workspace_id, tsvector_to_array(NEW.search), 1 WHERE NEW.merged_into_id IS NULL AND NEW.search <> ''::tsvector;
  RETURN NULL;
END;
$$;
