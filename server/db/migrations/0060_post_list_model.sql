-- The board list's read model (issue 40, docs/architecture.md#the-board-lists-read-model): each post carries its
-- item of the team's list as JSON text, rendered by a trigger whenever the post or a row it shows changes, so a
-- page is an index walk, one probe per post and a `string_agg` of stored text. The text is cut around the MRR
-- (`list_head` ends with `"mrr":`, `list_tail` follows it): the read puts the figure or `null` between them,
-- as the caller may see revenue or not. Same fields, order and values as postJson (server/modules/posts/queries.ts).
ALTER TABLE "posts" ADD COLUMN "list_head" text NOT NULL DEFAULT '';--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "list_tail" text NOT NULL DEFAULT '';--> statement-breakpoint
CREATE FUNCTION chorus_json(value anyelement) RETURNS text LANGUAGE sql STABLE AS $$ SELECT coalesce(to_json(value)::text, 'null') $$;--> statement-breakpoint
-- A time as the API writes it: UTC, milliseconds, `Z` (isoText in server/modules/posts/queries.ts).
CREATE FUNCTION chorus_json_time(value timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT '"' || to_char(value AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' $$;--> statement-breakpoint
-- Every update renders the item again (a vote changes its count, demand and score). Plain statements of the
-- function (plans kept for the session), not SQL functions with subqueries: those were planned again on every
-- call from a trigger (~1 ms a row). Last of the BEFORE triggers by name, so it sees the score 0053's computed.
-- The author as the team reads it: a member, else an end user, else a key, else deleted (toAuthor).
CREATE FUNCTION chorus_post_listing() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  board_slug text;
  status_name text;
  status_kind text;
  label_slugs text := '[]';
  author text;
  verified boolean := NEW.author_end_user_id IS NULL;
BEGIN
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
  -- Math.round(weighted * 1e6) / 1e6, as the process rounds it.
  NEW.list_tail := ',"weighted":' || (floor(NEW.demand_weighted * 1000000::float8 + 0.5) / 1000000::float8)
    || '},"score":' || coalesce(NEW.score::text, 'null') || ',"factors":' || NEW.factors::text || ',"moderation":' || chorus_json(NEW.moderation) || '}';
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER "posts_listing" BEFORE INSERT OR UPDATE ON "posts" FOR EACH ROW EXECUTE FUNCTION chorus_post_listing();--> statement-breakpoint
-- The rows an item shows besides its post: a renamed board, status or label, or an author's new name, e-mail or
-- verification, renders its posts' items again (an update of the post renders it; `list_tail` is set to itself).
-- That is one write per post shown: a board or status rename on a large board rewrites its posts once.
CREATE FUNCTION chorus_listing_sources() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'boards' THEN
    UPDATE posts SET list_tail = list_tail WHERE board_id = NEW.id;
  ELSIF TG_TABLE_NAME = 'statuses' THEN
    UPDATE posts SET list_tail = list_tail WHERE status_id = NEW.id;
  ELSIF TG_TABLE_NAME = 'labels' THEN
    UPDATE posts SET list_tail = list_tail WHERE id IN (SELECT post_id FROM post_labels WHERE label_id = NEW.id);
  ELSIF TG_TABLE_NAME = 'users' THEN
    UPDATE posts SET list_tail = list_tail WHERE author_user_id = NEW.id;
  ELSIF TG_TABLE_NAME = 'end_users' THEN
    UPDATE posts SET list_tail = list_tail WHERE author_end_user_id = NEW.id;
  ELSE
    UPDATE posts SET list_tail = list_tail WHERE author_key_id = NEW.id;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE INDEX "posts_author_end_user_idx" ON "posts" ("author_end_user_id") WHERE author_end_user_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "posts_author_key_idx" ON "posts" ("author_key_id") WHERE author_key_id IS NOT NULL;--> statement-breakpoint
CREATE TRIGGER "boards_listing" AFTER UPDATE OF "slug" ON "boards" FOR EACH ROW WHEN (OLD.slug IS DISTINCT FROM NEW.slug)
  EXECUTE FUNCTION chorus_listing_sources();--> statement-breakpoint
CREATE TRIGGER "statuses_listing" AFTER UPDATE OF "name", "kind" ON "statuses" FOR EACH ROW WHEN ((OLD.name, OLD.kind) IS DISTINCT FROM (NEW.name, NEW.kind))
  EXECUTE FUNCTION chorus_listing_sources();--> statement-breakpoint
CREATE TRIGGER "labels_listing" AFTER UPDATE OF "slug" ON "labels" FOR EACH ROW WHEN (OLD.slug IS DISTINCT FROM NEW.slug)
  EXECUTE FUNCTION chorus_listing_sources();--> statement-breakpoint
CREATE TRIGGER "users_listing" AFTER UPDATE OF "name", "email" ON "users" FOR EACH ROW WHEN ((OLD.name, OLD.email) IS DISTINCT FROM (NEW.name, NEW.email))
  EXECUTE FUNCTION chorus_listing_sources();--> statement-breakpoint
CREATE TRIGGER "end_users_listing" AFTER UPDATE OF "name", "email", "verified_at" ON "end_users" FOR EACH ROW
  WHEN ((OLD.name, OLD.email, OLD.verified_at IS NULL) IS DISTINCT FROM (NEW.name, NEW.email, NEW.verified_at IS NULL))
  EXECUTE FUNCTION chorus_listing_sources();--> statement-breakpoint
CREATE TRIGGER "api_keys_listing" AFTER UPDATE OF "name" ON "api_keys" FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION chorus_listing_sources();--> statement-breakpoint
UPDATE posts SET list_tail = list_tail;
