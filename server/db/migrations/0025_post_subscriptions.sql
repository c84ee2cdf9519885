-- Close the loop (issue 32): who follows a post, what they have not heard yet, and what an end user
-- asked of their e-mail (language, unsubscribe, bounces).
ALTER TABLE end_users ADD COLUMN locale text;--> statement-breakpoint
-- The last SMTP 5xx for the address: it is skipped until the address changes.
ALTER TABLE end_users ADD COLUMN email_bounced_at timestamptz;--> statement-breakpoint
-- "No more e-mail about this workspace's posts", from the link in any of them.
ALTER TABLE end_users ADD COLUMN notifications_off_at timestamptz;--> statement-breakpoint
-- The secret of the unsubscribe links (made when the end user is first mailed).
ALTER TABLE end_users ADD COLUMN mail_token text;--> statement-breakpoint
CREATE UNIQUE INDEX end_users_mail_token_key ON end_users (mail_token);--> statement-breakpoint
CREATE TABLE post_subscriptions (
  post_id text NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
  end_user_id text NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  reason text NOT NULL,
  unsubscribed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (post_id, end_user_id)
);--> statement-breakpoint
CREATE INDEX post_subscriptions_end_user_idx ON post_subscriptions (end_user_id);--> statement-breakpoint
-- One row per (event, subscriber): the mail queue of post updates, batched per end user when sent.
CREATE TABLE subscriber_updates (
  event_id text NOT NULL,
  end_user_id text NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  post_id text NOT NULL,
  kind text NOT NULL,
  data jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  attempts integer NOT NULL DEFAULT 0,
  lease_until timestamptz,
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (event_id, end_user_id)
);--> statement-breakpoint
CREATE INDEX subscriber_updates_queue_idx ON subscriber_updates (end_user_id, created_at) WHERE status = 'pending';--> statement-breakpoint
CREATE TRIGGER subscriber_updates_notify_work AFTER INSERT ON subscriber_updates FOR EACH STATEMENT EXECUTE FUNCTION chorus_notify_work();
