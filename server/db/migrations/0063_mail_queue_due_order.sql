-- The e-mail queues were indexed in created_at order (0020), so a pending e-mail that is not due yet stayed
-- at the front: every owner's daily-digest row waits, pending, until the digest hour, and every claim of
-- the day walked past all of them before it found a due one (30,000 new posts in a burst: each claim read
-- every digest row scheduled so far). Indexed by due time (the lease, also the "not before"; else the row's
-- creation), a claim reads only due rows, oldest due first, and stops at its limit.
DROP INDEX IF EXISTS "notification_events_email_queue_idx";
--> statement-breakpoint
CREATE INDEX "notification_events_email_due_at_idx" ON "notification_events" USING btree ((coalesce("email_lease_until", "created_at"))) WHERE email_status = 'pending';
--> statement-breakpoint
DROP INDEX IF EXISTS "changelog_emails_queue_idx";
--> statement-breakpoint
CREATE INDEX "changelog_emails_due_at_idx" ON "changelog_emails" USING btree ((coalesce("lease_until", "created_at"))) WHERE status = 'pending';
--> statement-breakpoint
-- A daily-digest row is written waiting (a provisional lease a day out, server/modules/notifications/rows.ts)
-- and scheduled for its digest hour by one statement per batch of new rows (digest.ts scheduleDigests),
-- which finds them here, instead of being claimed, read and rescheduled one by one as a due e-mail.
CREATE INDEX "notification_events_digest_unscheduled_idx" ON "notification_events" USING btree ("created_at") WHERE email_status = 'pending' AND digest AND digest_at IS NULL;
