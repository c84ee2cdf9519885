-- Wakes the background loops instead of polling: every statement that adds work (an outbox event, a
-- webhook or chat delivery, a notification or changelog e-mail) sends a NOTIFY on `chorus_work` whose
-- payload is the table's name. NOTIFY is transactional (sent at commit, never for a rollback) and
-- PostgreSQL folds identical notifications of one transaction into one, so a statement-level trigger
-- costs one message per writing transaction and table. Listeners: server/db/work.ts.
CREATE FUNCTION chorus_notify_work() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('chorus_work', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER events_notify_work AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work();
--> statement-breakpoint
CREATE TRIGGER webhook_deliveries_notify_work AFTER INSERT ON webhook_deliveries FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work();
--> statement-breakpoint
CREATE TRIGGER chat_deliveries_notify_work AFTER INSERT ON chat_deliveries FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work();
--> statement-breakpoint
CREATE TRIGGER notification_events_notify_work AFTER INSERT ON notification_events FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work();
--> statement-breakpoint
CREATE TRIGGER changelog_emails_notify_work AFTER INSERT ON changelog_emails FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work();
