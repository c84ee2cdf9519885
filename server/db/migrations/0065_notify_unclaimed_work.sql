-- The work triggers of three queues NOTIFY only for rows someone must act on now (0056 made them skip
-- statements that inserted nothing):
-- * webhook and chat deliveries inserted leased (the delivery loop fans out and claims in one transaction,
--   background/leases.ts insertLeased) are their loop's already: the notice woke that same loop, and every
--   other process's, for an empty claim after each round;
-- * notification rows: only a pending e-mail due now wakes the mailer. A daily digest is written scheduled
--   for its hour (notifications/rows.ts), an in-app row sends nothing; each woke the mailer (and loaded it
--   into an idle worker) for every new post of a workspace whose owner keeps the default daily digest. A
--   digest row written unscheduled (by a process older than this migration) still wakes it, to be scheduled.
CREATE OR REPLACE FUNCTION chorus_notify_unleased_work() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows WHERE lease_owner IS NULL) THEN
    PERFORM pg_notify('chorus_work_' || TG_TABLE_NAME, '');
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION chorus_notify_due_mail() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows WHERE email_status = 'pending'
      AND (email_lease_until IS NULL OR email_lease_until <= now() OR (digest AND digest_at IS NULL))) THEN
    PERFORM pg_notify('chorus_work_' || TG_TABLE_NAME, '');
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
DROP TRIGGER "webhook_deliveries_notify_work" ON "webhook_deliveries";--> statement-breakpoint
CREATE TRIGGER "webhook_deliveries_notify_work" AFTER INSERT ON "webhook_deliveries" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_unleased_work();--> statement-breakpoint
DROP TRIGGER "chat_deliveries_notify_work" ON "chat_deliveries";--> statement-breakpoint
CREATE TRIGGER "chat_deliveries_notify_work" AFTER INSERT ON "chat_deliveries" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_unleased_work();--> statement-breakpoint
DROP TRIGGER "notification_events_notify_work" ON "notification_events";--> statement-breakpoint
CREATE TRIGGER "notification_events_notify_work" AFTER INSERT ON "notification_events" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_due_mail();
