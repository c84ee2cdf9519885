-- One channel per table that receives work (`chorus_work_<table>`) instead of one channel for all: a
-- listener hears only the tables it waits on. With the single channel the webhook worker thread received
-- (and dropped) a notification for every committed outbox event, ~6 % of create-post throughput.
CREATE OR REPLACE FUNCTION chorus_notify_work() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('chorus_work_' || TG_TABLE_NAME, '');
  RETURN NULL;
END;
$$;
