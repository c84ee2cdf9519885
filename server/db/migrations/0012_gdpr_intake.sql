-- Inbound e-mail: each workspace's intake address is `{email_intake_token}@{INBOUND_EMAIL_DOMAIN}`.
-- The default is the one generator of tokens (creation and rotation both use it): 122 random bits.
ALTER TABLE "workspaces" ADD COLUMN "email_intake_token" text DEFAULT replace(gen_random_uuid()::text, '-', '') NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX "workspaces_email_intake_token_key" ON "workspaces" USING btree ("email_intake_token");
--> statement-breakpoint
CREATE TABLE "inbound_emails" (
	"workspace_id" text NOT NULL,
	"message_id" text NOT NULL,
	"post_id" text,
	"comment_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inbound_emails_workspace_id_message_id_pk" PRIMARY KEY("workspace_id","message_id")
);
--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_post_id_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."posts"("id") ON DELETE set null ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_comment_id_comments_id_fk" FOREIGN KEY ("comment_id") REFERENCES "public"."comments"("id") ON DELETE set null ON UPDATE no action;
--> statement-breakpoint
-- Mail about a workspace (invitations, notifications) goes when the workspace goes.
ALTER TABLE "email_outbox" ADD COLUMN "workspace_id" text;
--> statement-breakpoint
ALTER TABLE "email_outbox" ADD CONSTRAINT "email_outbox_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "email_outbox_workspace_idx" ON "email_outbox" USING btree ("workspace_id");
--> statement-breakpoint
CREATE INDEX "email_outbox_to_idx" ON "email_outbox" USING btree ("to");
--> statement-breakpoint
-- Exports page through a workspace's rows by id (keyset), whatever the size of the other workspaces.
CREATE INDEX "posts_workspace_id_idx" ON "posts" USING btree ("workspace_id","id");
--> statement-breakpoint
CREATE INDEX "comments_workspace_id_idx" ON "comments" USING btree ("workspace_id","id");
--> statement-breakpoint
CREATE INDEX "votes_workspace_id_idx" ON "votes" USING btree ("workspace_id","id");
--> statement-breakpoint
CREATE INDEX "end_users_workspace_id_idx" ON "end_users" USING btree ("workspace_id","id");
--> statement-breakpoint
CREATE INDEX "comments_author_user_idx" ON "comments" USING btree ("author_user_id") WHERE author_user_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "posts_author_user_idx" ON "posts" USING btree ("author_user_id") WHERE author_user_id IS NOT NULL;
--> statement-breakpoint
-- Account deletion: events and notifications of other workspaces keep the change they describe, but
-- every object naming the deleted person (`{id, ..., email}`, e.g. an author) becomes the deleted-author
-- object, and any string equal to their id or e-mail becomes null.
CREATE FUNCTION chorus_forget_person(doc jsonb, person_id text, person_email text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  result jsonb;
  entry record;
BEGIN
  CASE jsonb_typeof(doc)
  WHEN 'object' THEN
    IF doc->>'id' = person_id AND doc ? 'email' THEN
      RETURN jsonb_build_object('type', 'deleted', 'id', null, 'name', 'Deleted user', 'email', null);
    END IF;
    result := '{}'::jsonb;
    FOR entry IN SELECT key, value FROM jsonb_each(doc) LOOP
      result := result || jsonb_build_object(entry.key, chorus_forget_person(entry.value, person_id, person_email));
    END LOOP;
    RETURN result;
  WHEN 'array' THEN
    SELECT coalesce(jsonb_agg(chorus_forget_person(item.value, person_id, person_email) ORDER BY item.ordinality), '[]'::jsonb)
      INTO result FROM jsonb_array_elements(doc) WITH ORDINALITY AS item;
    RETURN result;
  WHEN 'string' THEN
    IF doc #>> '{}' = person_id OR lower(doc #>> '{}') = person_email THEN
      RETURN 'null'::jsonb;
    END IF;
    RETURN doc;
  ELSE
    RETURN doc;
  END CASE;
END;
$$;
