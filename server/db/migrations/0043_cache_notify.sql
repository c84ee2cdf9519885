-- Drops the per-process caches of every server process at once (server/db/changes.ts): a statement that
-- changes what a cached credential look-up answers (a key revoked or re-scoped, a workspace's settings or
-- subscription, a membership or role) sends a NOTIFY on `chorus_cache` whose payload is the table's name.
-- NOTIFY is sent at commit (never for a rollback) and PostgreSQL folds identical notifications of one
-- transaction, so a statement-level trigger costs one message per writing transaction and table.
-- `UPDATE OF` leaves out the once-a-minute `last_used_at` touch of a key, which changes no answer.
-- The same trigger counts the change in `cache_changes`, in the writing transaction: a keyed request reads
-- the count in the statement it sends anyway (its rate-limit hit), so a key answered from memory is checked
-- again whenever anything changed since it was cached, even before the notification arrives.
CREATE TABLE cache_changes (id smallint PRIMARY KEY, n integer NOT NULL);
--> statement-breakpoint
INSERT INTO cache_changes (id, n) VALUES (1, 0);
--> statement-breakpoint
CREATE FUNCTION chorus_notify_cache() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE cache_changes SET n = (n + 1) % 2000000000 WHERE id = 1;
  PERFORM pg_notify('chorus_cache', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER api_keys_notify_cache AFTER UPDATE OF workspace_id, name, key_hash, scopes, revoked_at OR DELETE ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_cache();
--> statement-breakpoint
CREATE TRIGGER workspaces_notify_cache AFTER UPDATE OR DELETE ON workspaces FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_cache();
--> statement-breakpoint
CREATE TRIGGER members_notify_cache AFTER INSERT OR UPDATE OR DELETE ON members FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_cache();
