-- Every outbox event is queued for fan-out (webhook deliveries, notifications) in the transaction
-- that writes it, whichever module writes it: a rolled-back change queues nothing, a committed one
-- cannot be missed by a dispatcher that reads `event_dispatch` instead of scanning `events`.
CREATE FUNCTION chorus_queue_event_dispatch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_dispatch (event_id) VALUES (NEW.id);
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER events_queue_dispatch AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION chorus_queue_event_dispatch();
