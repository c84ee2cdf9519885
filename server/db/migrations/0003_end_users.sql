CREATE TABLE "jwt_configs" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"algorithm" text NOT NULL,
	"secret_sealed" text,
	"previous_secret_sealed" text,
	"previous_secret_expires_at" timestamp with time zone,
	"public_key" text,
	"jwks_url" text,
	"issuer" text,
	"audience" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "jwt_configs" ADD CONSTRAINT "jwt_configs_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;