-- The work triggers (0016, 0018, 0025, 0038, 0040) NOTIFY only when their statement inserted a row. As
-- plain statement-level triggers they fired on every INSERT, an `INSERT ... SELECT` that matched nothing
-- included: the dispatcher's fan-outs run such statements for every event (an event no webhook endpoint or
-- chat channel subscribes to inserts zero deliveries), and each woke the background loops for an empty
-- round. A transition table says whether the statement inserted anything; one function serves every table
-- (each trigger names its transition table `new_rows`, as in 0049).
CREATE OR REPLACE FUNCTION chorus_notify_work() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows) THEN
    PERFORM pg_notify('chorus_work_' || TG_TABLE_NAME, '');
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
-- Every table in server/db/work.ts WORK_QUEUES: its trigger again, now with the transition table.
DO $$
DECLARE queue text;
BEGIN
  FOREACH queue IN ARRAY ARRAY['events', 'webhook_deliveries', 'chat_deliveries', 'notification_events', 'changelog_emails', 'subscriber_updates', 'duplicate_checks', 'imports'] LOOP
    EXECUTE format('DROP TRIGGER %I ON %I', queue || '_notify_work', queue);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work()', queue || '_notify_work', queue);
  END LOOP;
END;
$$;
