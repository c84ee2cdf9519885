-- Webhooks get a dispatch queue of their own (the webhook lane). An event whose workspace has an enabled
-- endpoint subscribed to its kind is queued in `webhook_dispatch` beside `event_dispatch`, in the writer's
-- transaction. The delivery loop takes it, inserts its deliveries leased and answers what sending them needs
-- in one statement (webhooks/queue.ts `takeWebhookEvents`), while the dispatcher fans the same event out
-- to the other subscribers (notifications, chat, post subscribers, duplicate checks) in a transaction of its
-- own: a delivery no longer waits for the member notifications, digests and post subscriptions of its batch,
-- and a failing subscriber no longer holds webhooks back (BENCHMARKS.md, "Notes: the twenty-first session").
-- An endpoint hears the events committed while it is enabled and subscribed to their kind.
CREATE TABLE "webhook_dispatch" (
  "event_id" text PRIMARY KEY NOT NULL REFERENCES "events"("id") ON DELETE cascade
);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION chorus_queue_event_dispatch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_dispatch (event_id) SELECT id FROM new_events;
  INSERT INTO webhook_dispatch (event_id) SELECT n.id FROM new_events n
  WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.workspace_id = n.workspace_id AND w.enabled AND w.events ? n.type);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Events queued before this migration: their webhooks are the new lane's now (an older process still
-- running fans them out too; a delivery it already inserted is not inserted again, one it already sent may be).
INSERT INTO webhook_dispatch (event_id) SELECT d.event_id FROM event_dispatch d JOIN events n ON n.id = d.event_id
WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.workspace_id = n.workspace_id AND w.enabled AND w.events ? n.type);
--> statement-breakpoint
-- The lane itself (webhooks/queue.ts `takeWebhookEvents`), one call in a transaction of its own: one round trip
-- from an event's notification to its request. It takes up to `batch` queued events and inserts a delivery
-- per enabled endpoint subscribed to the event's kind, the first `room` leased to `lane_owner` for `lease_seconds`,
-- and answers the count taken beside each leased delivery with what sending it needs (one row of nulls when
-- none was leased). Two statements, in this order:
-- * the take, written out at each call (EXECUTE): planned for the queue's size now, where a generic plan cached
--   while the queue was small would sort every queued row once it is large (db/work.ts `queueTransaction`);
-- * the deliveries, a cached plan. Its snapshot is taken after the take's, so it sees every event the take saw
--   and every endpoint committed before them; one statement's snapshot for both would miss an event committed
--   between the statement's start and the take's, and delete it from the queue unsent.
-- The commit does not wait for the WAL, as a queue transaction's does not (db/work.ts `ASYNC_COMMIT`).
CREATE FUNCTION chorus_webhook_lane(lane_owner int, room int, batch int, lease_seconds int)
RETURNS TABLE (taken int, webhook_id text, event_id text, attempts int, manual boolean, url text, secret text,
  previous_secret text, previous_live boolean, type text, workspace_id text, data jsonb, created_at text)
LANGUAGE plpgsql AS $$
DECLARE
  ids text[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  EXECUTE 'WITH taken AS (DELETE FROM webhook_dispatch WHERE ctid = ANY (ARRAY(SELECT ctid FROM webhook_dispatch
      ORDER BY event_id LIMIT $1 FOR UPDATE SKIP LOCKED)) RETURNING event_id) SELECT array_agg(event_id) FROM taken'
    INTO ids USING batch;
  RETURN QUERY
  WITH pairs AS (
    SELECT w.id AS target, e.id AS event, row_number() OVER (ORDER BY e.id, w.id) AS n
    FROM events e JOIN webhooks w ON w.workspace_id = e.workspace_id AND w.enabled AND w.events ? e.type
    WHERE e.id = ANY (ids)
  ), inserted AS (
    INSERT INTO webhook_deliveries AS d (webhook_id, event_id, lease_owner, lease_until)
    SELECT k.target, k.event, CASE WHEN k.n <= room THEN lane_owner END,
      CASE WHEN k.n <= room THEN now() + make_interval(secs => lease_seconds) END
    FROM pairs k
    ON CONFLICT DO NOTHING
    RETURNING d.webhook_id, d.event_id, d.attempts, d.manual, d.lease_owner
  )
  SELECT coalesce(cardinality(ids), 0), j.* FROM (SELECT 1) one LEFT JOIN (
    SELECT l.webhook_id, l.event_id, l.attempts, l.manual, w.url, w.secret, w.previous_secret,
      coalesce(w.previous_secret_expires_at > now(), false),
      -- The timestamp as JavaScript's toISOString() writes it: the body's bytes are what is signed.
      e.type, e.workspace_id, e.data, to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    FROM inserted l JOIN webhooks w ON w.id = l.webhook_id JOIN events e ON e.id = l.event_id
    WHERE l.lease_owner = lane_owner
  ) j ON true;
END $$;
