-- Scores of custom formulas over `demand.*` kept current by the writes that move demand (issue 37,
-- docs/demand.md#scores). Saving such a formula stores it compiled to a SQL expression
-- (workspaces.score_sql, built by server/lib/formula.ts from the parsed tree, never from the typed text);
-- a trigger re-evaluates it on each post whose vote count or demand figures change, in the transaction
-- of the vote, unvote, merge, confirmation or company change, and records one `score.changed` per post
-- per transaction whose score really moved. Workspaces without such a formula pay one lookup per update.
ALTER TABLE "workspaces" ADD COLUMN "score_sql" text;
--> statement-breakpoint
-- The score of one post under a compiled formula ($1 factors, $2 voters, $3 verified voters, $4
-- companies, $5 mrr, $6 weighted); null where the formula gives none or overflows a double (a vote must
-- never fail on a score).
CREATE FUNCTION chorus_post_score(score_sql text, factors jsonb, voters float8, verified_voters float8, companies float8, mrr float8, weighted float8)
RETURNS float8 LANGUAGE plpgsql STABLE AS $$
DECLARE score float8;
BEGIN
  EXECUTE 'SELECT ' || score_sql INTO score USING factors, voters, verified_voters, companies, mrr, weighted;
  RETURN score;
EXCEPTION WHEN numeric_value_out_of_range OR invalid_argument_for_logarithm OR division_by_zero THEN
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION chorus_demand_score() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE expr text;
BEGIN
  SELECT score_sql INTO expr FROM workspaces WHERE id = NEW.workspace_id;
  IF expr IS NOT NULL THEN
    NEW.score := chorus_post_score(expr, NEW.factors, NEW.vote_count, NEW.demand_verified_voters, NEW.demand_companies, NEW.demand_mrr, NEW.demand_weighted);
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "posts_demand_score" BEFORE UPDATE OF "vote_count", "demand_verified_voters", "demand_companies", "demand_mrr", "demand_weighted" ON "posts" FOR EACH ROW
  WHEN ((OLD.vote_count, OLD.demand_verified_voters, OLD.demand_companies, OLD.demand_mrr, OLD.demand_weighted) IS DISTINCT FROM (NEW.vote_count, NEW.demand_verified_voters, NEW.demand_companies, NEW.demand_mrr, NEW.demand_weighted))
  EXECUTE FUNCTION chorus_demand_score();
--> statement-breakpoint
-- A new post starts with the formula's value at no demand (as saving the formula gives every post).
CREATE TRIGGER "posts_demand_score_new" BEFORE INSERT ON "posts" FOR EACH ROW EXECUTE FUNCTION chorus_demand_score();
--> statement-breakpoint
-- An id as server/lib/ids.ts makes them: prefix, 9 base36 characters of milliseconds, 16 random ones.
CREATE FUNCTION chorus_new_id(prefix text) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  alphabet constant text := '0123456789abcdefghijklmnopqrstuvwxyz';
  ms bigint := floor(extract(epoch from clock_timestamp()) * 1000);
  -- Two random UUIDs without their fixed version and variant bytes (6 and 8).
  random_bytes bytea := decode(replace(gen_random_uuid()::text, '-', ''), 'hex');
  more bytea := decode(replace(gen_random_uuid()::text, '-', ''), 'hex');
  stamp text := '';
  tail text := '';
  i int;
BEGIN
  FOR i IN 1..9 LOOP stamp := substr(alphabet, (ms % 36)::int + 1, 1) || stamp; ms := ms / 36; END LOOP;
  FOREACH i IN ARRAY ARRAY[0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 12, 13, 14, 15] LOOP tail := tail || substr(alphabet, get_byte(random_bytes, i) % 36 + 1, 1); END LOOP;
  tail := tail || substr(alphabet, get_byte(more, 0) % 36 + 1, 1) || substr(alphabet, get_byte(more, 1) % 36 + 1, 1);
  RETURN prefix || '_' || stamp || tail;
END $$;
--> statement-breakpoint
-- The `score.changed` event a transaction has already recorded for a post: a vote moves vote_count and
-- demand in two updates, a merge several; the second move updates that event instead of adding one.
CREATE TABLE "post_score_events" (
  "post_id" text PRIMARY KEY REFERENCES "posts"("id") ON DELETE CASCADE,
  "xact" bigint NOT NULL,
  "event_id" text NOT NULL
);
--> statement-breakpoint
CREATE FUNCTION chorus_demand_score_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  pending record;
  new_event text;
  post jsonb := jsonb_build_object('id', NEW.id, 'board_id', NEW.board_id, 'title', NEW.title, 'score', NEW.score,
    'demand', jsonb_build_object('voters', NEW.vote_count, 'verified_voters', NEW.demand_verified_voters, 'companies', NEW.demand_companies, 'mrr', NEW.demand_mrr, 'weighted', NEW.demand_weighted));
BEGIN
  -- An import's recount (0052, chorus.bulk_votes) moves scores but tells no one: imported history sends no events.
  IF current_setting('chorus.bulk_votes', true) = 'on' THEN RETURN NULL; END IF;
  SELECT e.id, e.data->'from_score' AS from_score INTO pending FROM post_score_events p JOIN events e ON e.id = p.event_id WHERE p.post_id = NEW.id AND p.xact = txid_current();
  IF FOUND THEN
    IF pending.from_score = coalesce(to_jsonb(NEW.score), 'null'::jsonb) THEN
      -- Back where the transaction started: no change to tell.
      DELETE FROM events WHERE id = pending.id;
      DELETE FROM post_score_events WHERE post_id = NEW.id;
    ELSE
      UPDATE events SET data = data || jsonb_build_object('post', post, 'to_score', NEW.score) WHERE id = pending.id;
    END IF;
    RETURN NULL;
  END IF;
  new_event := chorus_new_id('evt');
  INSERT INTO events (id, workspace_id, type, data)
    VALUES (new_event, NEW.workspace_id, 'score.changed', jsonb_build_object('post', post, 'from_score', OLD.score, 'to_score', NEW.score, 'cause', 'demand'));
  INSERT INTO post_score_events (post_id, xact, event_id) VALUES (NEW.id, txid_current(), new_event)
    ON CONFLICT (post_id) DO UPDATE SET xact = excluded.xact, event_id = excluded.event_id;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Only score moves made by demand: a factors change or a model change records its own (or, by design, none).
CREATE TRIGGER "posts_demand_score_event" AFTER UPDATE ON "posts" FOR EACH ROW
  WHEN (OLD.score IS DISTINCT FROM NEW.score AND (OLD.vote_count, OLD.demand_verified_voters, OLD.demand_companies, OLD.demand_mrr, OLD.demand_weighted) IS DISTINCT FROM (NEW.vote_count, NEW.demand_verified_voters, NEW.demand_companies, NEW.demand_mrr, NEW.demand_weighted))
  EXECUTE FUNCTION chorus_demand_score_event();
