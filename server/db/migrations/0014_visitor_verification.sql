ALTER TABLE "end_users" ADD COLUMN "verified_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "end_users" ADD COLUMN "confirmation_sent_at" timestamp with time zone;
--> statement-breakpoint
UPDATE "end_users" SET "verified_at" = "created_at" WHERE "external_id" IS NOT NULL;
--> statement-breakpoint
CREATE TABLE "visitor_confirmations" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"end_user_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"claim_hash" text,
	"expires_at" timestamp with time zone NOT NULL,
	"claim_expires_at" timestamp with time zone,
	"confirmed_at" timestamp with time zone,
	"claimed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "visitor_confirmations" ADD CONSTRAINT "visitor_confirmations_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "visitor_confirmations" ADD CONSTRAINT "visitor_confirmations_end_user_id_end_users_id_fk" FOREIGN KEY ("end_user_id") REFERENCES "public"."end_users"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "visitor_confirmations_token_key" ON "visitor_confirmations" USING btree ("token_hash");
--> statement-breakpoint
CREATE UNIQUE INDEX "visitor_confirmations_claim_key" ON "visitor_confirmations" USING btree ("claim_hash");
--> statement-breakpoint
CREATE INDEX "visitor_confirmations_end_user_idx" ON "visitor_confirmations" USING btree ("end_user_id");
