-- Idempotency across a crash (docs/security.md#end-user-identity): the transaction that commits a keyed
-- request's effect also marks its key (`effect_committed_at`), conditional on still holding it
-- (`holder`), so a retry after a crash between the commit and the stored response finds the effect
-- instead of running the write again, and a request whose lease was taken over cannot commit at all.
ALTER TABLE "idempotency_keys" ADD COLUMN "holder" text;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "effect_committed_at" timestamp with time zone;
--> statement-breakpoint
-- The widget session of an unconfirmed identity that cast a vote: only that session (or the confirmed
-- identity) may take the vote back; anyone else who types the address can add votes, never remove them.
ALTER TABLE "votes" ADD COLUMN "cast_by_session" text;
