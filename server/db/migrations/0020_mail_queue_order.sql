-- The e-mail senders claim the oldest pending rows (server/db/work.ts claimOldestPending). Their indexes
-- were on other columns, so every claim read and sorted all pending e-mails (a changelog sent to 10,000
-- subscribers: 500 claims of 20, each sorting what is left). Indexed in claim order, a claim walks the
-- index and stops at its limit.
DROP INDEX IF EXISTS "notification_events_email_due_idx";
--> statement-breakpoint
CREATE INDEX "notification_events_email_queue_idx" ON "notification_events" USING btree ("created_at") WHERE email_status = 'pending';
--> statement-breakpoint
DROP INDEX IF EXISTS "changelog_emails_pending_idx";
--> statement-breakpoint
CREATE INDEX "changelog_emails_queue_idx" ON "changelog_emails" USING btree ("created_at") WHERE status = 'pending';
