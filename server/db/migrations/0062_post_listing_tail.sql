-- The read model's trigger (migration 0060) looked up the board, status, labels and author of every updated
-- post and rewrote its tail, so an update of demand, score or moderation alone paid five look-ups and a wider
-- row a post: a company's MRR moving 10,000 posts took 2.2 s against 1.0 s before 0060 (bench/demand.ts,
-- BENCHMARKS.md). The tail (weighted demand, score, factors, moderation: plain columns) is now written by the
-- read itself (`postItemJson`), and the head is rendered on insert, when a column it shows changes, or when a
-- source trigger empties it (a renamed board, status, label or author: `list_head = ''`).
ALTER TABLE "posts" DROP COLUMN "list_tail";--> statement-breakpoint
CREATE OR REPLACE FUNCTION chorus_post_listing() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  board_slug text;
  status_name text;
  status_kind text;
  label_slugs text := '[]';
  author text;
  verified boolean := NEW.author_end_user_id IS NULL;
BEGIN
  -- Nothing the head shows changed (an update of demand, score or moderation alone, e.g. a company's MRR
  -- moving 10,000 posts): nothing to write, and no look-up. The source triggers below empty the head to have it
  -- rendered again.
  IF TG_OP = 'UPDATE' AND NEW.list_head <> '' AND NEW.list_head = OLD.list_head
    AND (NEW.id, NEW.board_id, NEW.title, NEW.body, NEW.status_id, NEW.label_ids, NEW.vote_count, NEW.comment_count,
         NEW.author_user_id, NEW.author_end_user_id, NEW.author_key_id, NEW.owner_user_id, NEW.merged_into_id,
         NEW.language, NEW.tracker_issue, NEW.created_at, NEW.updated_at, NEW.demand_verified_voters, NEW.demand_companies)
      IS NOT DISTINCT FROM
        (OLD.id, OLD.board_id, OLD.title, OLD.body, OLD.status_id, OLD.label_ids, OLD.vote_count, OLD.comment_count,
         OLD.author_user_id, OLD.author_end_user_id, OLD.author_key_id, OLD.owner_user_id, OLD.merged_into_id,
         OLD.language, OLD.tracker_issue, OLD.created_at, OLD.updated_at, OLD.demand_verified_voters, OLD.demand_companies) THEN
    RETURN NEW;
  END IF;
  SELECT slug INTO board_slug FROM boards WHERE id = NEW.board_id;
  SELECT name, kind INTO status_name, status_kind FROM statuses WHERE id = NEW.status_id;
  IF cardinality(NEW.label_ids) > 0 THEN
    SELECT coalesce(array_to_json(array_agg(slug ORDER BY slug))::text, '[]') INTO label_slugs FROM labels WHERE id = ANY(NEW.label_ids);
  END IF;
  IF NEW.author_user_id IS NOT NULL THEN
    SELECT '{"type":"member","id":' || chorus_json(id) || ',"name":' || chorus_json(coalesce(name, email, 'Team member')) || ',"email":' || chorus_json(email) || '}'
      INTO author FROM users WHERE id = NEW.author_user_id;
  END IF;
  IF NEW.author_end_user_id IS NOT NULL THEN
    SELECT coalesce(author, '{"type":"end_user","id":' || chorus_json(id) || ',"name":' || chorus_json(coalesce(name, email, 'Anonymous')) || ',"email":' || chorus_json(email) || '}'), verified_at IS NOT NULL
      INTO author, verified FROM end_users WHERE id = NEW.author_end_user_id;
  END IF;
  IF author IS NULL AND NEW.author_key_id IS NOT NULL THEN
    SELECT '{"type":"api_key","id":' || chorus_json(id) || ',"name":' || chorus_json(coalesce(name, 'API key')) || ',"email":null}'
      INTO author FROM api_keys WHERE id = NEW.author_key_id;
  END IF;
  NEW.list_head := '{"id":' || chorus_json(NEW.id) || ',"board":' || chorus_json(board_slug) || ',"board_id":' || chorus_json(NEW.board_id)
    || ',"title":' || chorus_json(NEW.title) || ',"body":' || chorus_json(NEW.body)
    || ',"status":' || chorus_json(status_name) || ',"status_id":' || chorus_json(NEW.status_id) || ',"status_kind":' || chorus_json(status_kind)
    || ',"labels":' || label_slugs || ',"votes":' || NEW.vote_count || ',"comment_count":' || NEW.comment_count
    || ',"author":' || coalesce(author, '{"type":"deleted","id":null,"name":"Deleted user","email":null}') || ',"verified":' || coalesce(verified, false)
    || ',"owner_user_id":' || chorus_json(NEW.owner_user_id) || ',"merged_into":' || chorus_json(NEW.merged_into_id)
    || ',"language":' || chorus_json(NEW.language) || ',"tracker_issue":' || coalesce(NEW.tracker_issue::text, 'null')
    || ',"created_at":' || chorus_json_time(NEW.created_at) || ',"updated_at":' || chorus_json_time(NEW.updated_at)
    || ',"demand":{"voters":' || NEW.vote_count || ',"verified_voters":' || NEW.demand_verified_voters || ',"companies":' || NEW.demand_companies || ',"mrr":';
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION chorus_listing_sources() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'boards' THEN
    UPDATE posts SET list_head = '' WHERE board_id = NEW.id;
  ELSIF TG_TABLE_NAME = 'statuses' THEN
    UPDATE posts SET list_head = '' WHERE status_id = NEW.id;
  ELSIF TG_TABLE_NAME = 'labels' THEN
    UPDATE posts SET list_head = '' WHERE id IN (SELECT post_id FROM post_labels WHERE label_id = NEW.id);
  ELSIF TG_TABLE_NAME = 'users' THEN
    UPDATE posts SET list_head = '' WHERE author_user_id = NEW.id;
  ELSIF TG_TABLE_NAME = 'end_users' THEN
    UPDATE posts SET list_head = '' WHERE author_end_user_id = NEW.id;
  ELSE
    UPDATE posts SET list_head = '' WHERE author_key_id = NEW.id;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
