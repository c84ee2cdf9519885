-- Drops the per-process cache of public answers (the widget's list, the portal's pages, the public workspace;
-- server/lib/public-cache.ts) on every server process, through the channel and LISTEN connection of the
-- credential cache (migration 0043, server/db/changes.ts). A statement that changes what a public page shows
-- sends `NOTIFY chorus_cache` with the payload `public:<workspace id>` for each workspace it touched (or
-- `public:*` for a change that may show in any workspace: a member's name), so a write in one workspace leaves
-- the others' cached pages alone. Votes and comments change their post's counters, so the trigger on `posts`
-- covers them; workspace settings and branding arrive as 0043's `workspaces`, which drops every public answer.
-- Statement-level triggers with transition tables: one message per workspace and transaction however many rows
-- (PostgreSQL folds identical notifications), and no counter (`cache_changes` stays the credentials' own, so
-- a post does not make keyed requests read their key again). PostgreSQL allows transition tables only on
-- single-event triggers, hence three per table.
CREATE FUNCTION chorus_notify_public() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- post_labels has no workspace: its posts say which.
  IF TG_TABLE_NAME = 'post_labels' AND TG_OP = 'DELETE' THEN
    PERFORM pg_notify('chorus_cache', 'public:' || workspace_id) FROM (SELECT DISTINCT p.workspace_id FROM old_rows r JOIN posts p ON p.id = r.post_id) changed;
  ELSIF TG_TABLE_NAME = 'post_labels' THEN
    PERFORM pg_notify('chorus_cache', 'public:' || workspace_id) FROM (SELECT DISTINCT p.workspace_id FROM new_rows r JOIN posts p ON p.id = r.post_id) changed;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('chorus_cache', 'public:' || workspace_id) FROM (SELECT DISTINCT workspace_id FROM old_rows) changed;
  ELSE
    PERFORM pg_notify('chorus_cache', 'public:' || workspace_id) FROM (SELECT DISTINCT workspace_id FROM new_rows) changed;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
-- Authors as the public lists show them: an end user's name, address (the fallback name) and confirmation, an
-- API key's name. Only a real change notifies: identify and every anonymous write touch end_users rows.
CREATE FUNCTION chorus_notify_public_authors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'end_users' THEN
    PERFORM pg_notify('chorus_cache', 'public:' || workspace_id) FROM (
      SELECT DISTINCT n.workspace_id FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE (n.name, n.email, n.verified_at) IS DISTINCT FROM (o.name, o.email, o.verified_at)) changed;
  ELSIF TG_TABLE_NAME = 'api_keys' THEN
    PERFORM pg_notify('chorus_cache', 'public:' || workspace_id) FROM (
      SELECT DISTINCT n.workspace_id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.name IS DISTINCT FROM o.name) changed;
  ELSIF EXISTS (SELECT 1 FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE (n.name, n.email) IS DISTINCT FROM (o.name, o.email)) THEN
    -- users: a member's name shows on their posts in every workspace they belong to.
    PERFORM pg_notify('chorus_cache', 'public:*');
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER posts_notify_public_insert AFTER INSERT ON posts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER posts_notify_public_update AFTER UPDATE ON posts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER posts_notify_public_delete AFTER DELETE ON posts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER boards_notify_public_insert AFTER INSERT ON boards REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER boards_notify_public_update AFTER UPDATE ON boards REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER boards_notify_public_delete AFTER DELETE ON boards REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER statuses_notify_public_insert AFTER INSERT ON statuses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER statuses_notify_public_update AFTER UPDATE ON statuses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER statuses_notify_public_delete AFTER DELETE ON statuses REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER labels_notify_public_insert AFTER INSERT ON labels REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER labels_notify_public_update AFTER UPDATE ON labels REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER labels_notify_public_delete AFTER DELETE ON labels REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER post_labels_notify_public_insert AFTER INSERT ON post_labels REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER post_labels_notify_public_delete AFTER DELETE ON post_labels REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public();
--> statement-breakpoint
CREATE TRIGGER end_users_notify_public_update AFTER UPDATE ON end_users REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public_authors();
--> statement-breakpoint
CREATE TRIGGER api_keys_notify_public_update AFTER UPDATE ON api_keys REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public_authors();
--> statement-breakpoint
CREATE TRIGGER users_notify_public_update AFTER UPDATE ON users REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_public_authors();
