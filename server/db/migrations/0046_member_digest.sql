-- Members hear about new feedback by default (issue 32, "Members"): a subscription is delivered at
-- once (`instant`) or gathered into one e-mail a day (`daily`), and a member may hold one of each per
-- channel. A digest's notification row is first seen by the mailer, which sets `digest_at` to the next
-- digest time (NOTIFY_DIGEST_HOUR) and its lease, which is also "not before", to the same; at that time
-- the member's due rows go out as one e-mail.
ALTER TABLE "notification_subscriptions" ADD COLUMN "delivery" text NOT NULL DEFAULT 'instant';--> statement-breakpoint
DROP INDEX IF EXISTS "notification_subscriptions_member_channel_key";--> statement-breakpoint
CREATE UNIQUE INDEX "notification_subscriptions_member_channel_key" ON "notification_subscriptions" ("workspace_id", "user_id", "channel", "delivery");--> statement-breakpoint
ALTER TABLE "notification_events" ADD COLUMN "digest" boolean NOT NULL DEFAULT false;--> statement-breakpoint
ALTER TABLE "notification_events" ADD COLUMN "digest_at" timestamp with time zone;--> statement-breakpoint
-- A member with both an instant and a daily e-mail subscription to a kind gets a row for each.
DROP INDEX IF EXISTS "notification_events_member_event_key";--> statement-breakpoint
CREATE UNIQUE INDEX "notification_events_member_event_key" ON "notification_events" ("user_id", "event_id", "channel", "digest");--> statement-breakpoint
-- Every existing workspace's owner, as a new workspace's: new posts in a daily digest.
INSERT INTO "notification_subscriptions" ("id", "workspace_id", "user_id", "events", "channel", "delivery")
SELECT 'nsub_' || substr(md5(m."workspace_id" || m."user_id" || 'digest'), 1, 26), m."workspace_id", m."user_id", '["post.created"]'::jsonb, 'email', 'daily'
FROM "members" m WHERE m."role" = 'owner' AND m."status" = 'active'
ON CONFLICT DO NOTHING;
