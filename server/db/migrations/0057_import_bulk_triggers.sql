-- Imports without per-row trigger work (issue 39, docs/import.md#how-an-import-runs). Migration 0052 made
-- the votes' demand trigger return at once under `chorus.bulk_votes`; an AFTER ROW trigger still queues an
-- event per row and calls its function at the end of the statement. A WHEN clause is evaluated as the row
-- is written, so under the setting no event is queued at all. The same for the score event of a recount,
-- keeping 0054's `chorus.demand_scored` condition, and (under `chorus.bulk_posts`) for the deferred board count of each inserted post: the import adds one
-- count per (board, status) per batch instead. Both settings are local to the import's transaction.
DROP TRIGGER "votes_demand" ON "votes";--> statement-breakpoint
CREATE TRIGGER "votes_demand" AFTER INSERT OR DELETE OR UPDATE OF "post_id", "end_user_id", "user_id" ON "votes" FOR EACH ROW
  WHEN (current_setting('chorus.bulk_votes', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION chorus_votes_demand();--> statement-breakpoint
DROP TRIGGER "posts_demand_score_event" ON "posts";--> statement-breakpoint
CREATE TRIGGER "posts_demand_score_event" AFTER UPDATE ON "posts" FOR EACH ROW
  WHEN (current_setting('chorus.demand_scored', true) IS DISTINCT FROM 'on' AND OLD.score IS DISTINCT FROM NEW.score AND (OLD.vote_count, OLD.demand_verified_voters, OLD.demand_companies, OLD.demand_mrr, OLD.demand_weighted) IS DISTINCT FROM (NEW.vote_count, NEW.demand_verified_voters, NEW.demand_companies, NEW.demand_mrr, NEW.demand_weighted)
    AND current_setting('chorus.bulk_votes', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION chorus_demand_score_event();--> statement-breakpoint
DROP TRIGGER "posts_count_board_posts" ON "posts";--> statement-breakpoint
CREATE CONSTRAINT TRIGGER posts_count_board_posts AFTER INSERT OR DELETE OR UPDATE OF board_id, status_id, merged_into_id, moderation ON posts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (current_setting('chorus.bulk_posts', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION chorus_count_board_posts();
