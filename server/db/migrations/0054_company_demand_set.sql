-- A company's MRR, currency or plan change reaches its posts in one statement (issue 37, docs/demand.md;
-- BENCHMARKS.md "Demand"). Before, the company trigger's UPDATE of posts woke the per-row trigger
-- posts_demand_score on each post (a workspace lookup per post; with a formula over demand.* an EXECUTE
-- in a subtransaction and an event row each). Now chorus_demand_shift moves the figures and, when the
-- workspace's formula reads demand, the score in the same UPDATE (the compiled formula read once and
-- spliced over the row's columns), then records the score.changed events of the posts whose score moved
-- in one statement. While it runs, `chorus.demand_scored` is 'on' for the transaction and the per-row
-- triggers of 0053 stand aside (their WHEN reads it: not even a call); it is 'off' again right after.
--
-- The compiled formula (workspaces.score_sql, built by server/lib/formula.ts from the parsed tree) over
-- SQL expressions instead of chorus_post_score's parameters $1..$6. Its text holds `$` only in those
-- parameters (numbers are printed JavaScript numbers, names match [a-z0-9_.]), and the replacements
-- hold none, so each replace sees only the compiler's own placeholders.
CREATE FUNCTION chorus_score_sql_over(score_sql text, factors text, voters text, verified_voters text, companies text, mrr text, weighted text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT replace(replace(replace(replace(replace(replace(score_sql,
    '$1', '(' || factors || ')'), '$2', '(' || voters || ')::float8'), '$3', '(' || verified_voters || ')::float8'),
    '$4', '(' || companies || ')::float8'), '$5', '(' || mrr || ')::float8'), '$6', '(' || weighted || ')::float8')
$$;
--> statement-breakpoint
-- One score.changed per post whose score a set-based writer moved (what chorus_demand_score_event does
-- one row at a time): a post that already has an event in this transaction gets it updated, or removed
-- when the score is back where the transaction started; the others get a new one. The posts are read
-- as the writer left them.
CREATE FUNCTION chorus_record_score_events(changed_posts text[], from_scores float8[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('chorus.bulk_votes', true) = 'on' OR coalesce(cardinality(changed_posts), 0) = 0 THEN RETURN; END IF;
  WITH changed AS MATERIALIZED (
    SELECT p.id, p.workspace_id, c.from_score, p.score, pe.event_id, e.data->'from_score' AS first_from,
      jsonb_build_object('id', p.id, 'board_id', p.board_id, 'title', p.title, 'score', p.score,
        'demand', jsonb_build_object('voters', p.vote_count, 'verified_voters', p.demand_verified_voters, 'companies', p.demand_companies, 'mrr', p.demand_mrr, 'weighted', p.demand_weighted)) AS post
    FROM unnest(changed_posts, from_scores) AS c(id, from_score)
      JOIN posts p ON p.id = c.id
      LEFT JOIN post_score_events pe ON pe.post_id = p.id AND pe.xact = txid_current()
      LEFT JOIN events e ON e.id = pe.event_id
  ), undone AS (
    DELETE FROM events e USING changed c WHERE e.id = c.event_id AND c.first_from = coalesce(to_jsonb(c.score), 'null'::jsonb)
  ), undone_marks AS (
    DELETE FROM post_score_events pe USING changed c WHERE pe.post_id = c.id AND c.event_id IS NOT NULL AND c.first_from = coalesce(to_jsonb(c.score), 'null'::jsonb)
  ), moved_again AS (
    UPDATE events e SET data = e.data || jsonb_build_object('post', c.post, 'to_score', c.score)
    FROM changed c WHERE e.id = c.event_id AND c.first_from IS DISTINCT FROM coalesce(to_jsonb(c.score), 'null'::jsonb)
  ), fresh AS MATERIALIZED (
    SELECT c.*, chorus_new_id('evt') AS new_event FROM changed c WHERE c.event_id IS NULL ORDER BY c.id
  ), recorded AS (
    INSERT INTO events (id, workspace_id, type, data)
      SELECT new_event, workspace_id, 'score.changed', jsonb_build_object('post', post, 'from_score', from_score, 'to_score', score, 'cause', 'demand') FROM fresh
  )
  INSERT INTO post_score_events (post_id, xact, event_id) SELECT id, txid_current(), new_event FROM fresh
    ON CONFLICT (post_id) DO UPDATE SET xact = excluded.xact, event_id = excluded.event_id;
END $$;
--> statement-breakpoint
-- Adds each post's shift of mrr and weighted (one entry per post) in one UPDATE, the score with it when
-- the workspace's formula reads demand, then the events. A formula that overflows a double on some post
-- (a constant near 1e308) fails the set-based statement; the same UPDATE then runs with the per-row
-- triggers, which give that post a null score as they always have.
CREATE FUNCTION chorus_demand_shift(shift_workspace text, shift_posts text[], mrr_shifts bigint[], weighted_shifts float8[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  expr text;
  changed_posts text[];
  from_scores float8[];
BEGIN
  IF coalesce(cardinality(shift_posts), 0) = 0 THEN RETURN; END IF;
  SELECT score_sql INTO expr FROM workspaces WHERE id = shift_workspace;
  IF expr IS NULL THEN
    PERFORM set_config('chorus.demand_scored', 'on', true);
    UPDATE posts p SET demand_mrr = p.demand_mrr + s.mrr, demand_weighted = p.demand_weighted + s.weighted
      FROM unnest(shift_posts, mrr_shifts, weighted_shifts) AS s(post_id, mrr, weighted) WHERE p.id = s.post_id;
    PERFORM set_config('chorus.demand_scored', 'off', true);
    RETURN;
  END IF;
  BEGIN
    PERFORM set_config('chorus.demand_scored', 'on', true);
    -- The scores before are read under the row locks (a vote committed meanwhile is seen), in id order.
    EXECUTE format($sql$
      WITH shift AS MATERIALIZED (SELECT * FROM unnest($1, $2, $3) AS s(post_id, mrr, weighted)),
      locked AS MATERIALIZED (SELECT p.id, p.score FROM posts p JOIN shift s ON s.post_id = p.id ORDER BY p.id FOR UPDATE OF p),
      moved AS (
        UPDATE posts p SET demand_mrr = p.demand_mrr + s.mrr, demand_weighted = p.demand_weighted + s.weighted, score = %s
        FROM shift s JOIN locked o ON o.id = s.post_id WHERE p.id = s.post_id
        RETURNING p.id, o.score AS from_score, p.score AS to_score
      )
      SELECT array_agg(id), array_agg(from_score) FROM moved WHERE from_score IS DISTINCT FROM to_score
    $sql$, chorus_score_sql_over(expr, 'p.factors', 'p.vote_count', 'p.demand_verified_voters', 'p.demand_companies', 'p.demand_mrr + s.mrr', 'p.demand_weighted + s.weighted'))
      INTO changed_posts, from_scores USING shift_posts, mrr_shifts, weighted_shifts;
    PERFORM set_config('chorus.demand_scored', 'off', true);
  EXCEPTION WHEN numeric_value_out_of_range OR invalid_argument_for_logarithm OR division_by_zero THEN
    UPDATE posts p SET demand_mrr = p.demand_mrr + s.mrr, demand_weighted = p.demand_weighted + s.weighted
      FROM unnest(shift_posts, mrr_shifts, weighted_shifts) AS s(post_id, mrr, weighted) WHERE p.id = s.post_id;
    RETURN;
  END;
  PERFORM chorus_record_score_events(changed_posts, from_scores);
END $$;
--> statement-breakpoint
-- The company trigger of 0029 with its posts moved by chorus_demand_shift: the MRR difference on every
-- post the company voted for and, after a plan change, each verified member's weight difference on the
-- posts they voted for, summed per post.
CREATE OR REPLACE FUNCTION chorus_company_demand() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ws jsonb;
  mrr_change bigint;
  shift_posts text[];
  mrr_shifts bigint[];
  weighted_shifts float8[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM end_user_companies WHERE company_id = OLD.id;
    RETURN OLD;
  END IF;
  SELECT settings INTO ws FROM workspaces WHERE id = NEW.workspace_id;
  mrr_change := chorus_counted_mrr(ws, NEW.mrr, NEW.currency) - chorus_counted_mrr(ws, OLD.mrr, OLD.currency);
  IF mrr_change = 0 AND NEW.plan IS NOT DISTINCT FROM OLD.plan THEN RETURN NULL; END IF;
  SELECT array_agg(post_id ORDER BY post_id), array_agg(mrr ORDER BY post_id), array_agg(weighted ORDER BY post_id)
    INTO shift_posts, mrr_shifts, weighted_shifts
  FROM (
    SELECT post_id, sum(mrr)::bigint AS mrr, sum(weighted)::float8 AS weighted FROM (
      SELECT pcv.post_id, mrr_change AS mrr, 0::float8 AS weighted FROM post_company_votes pcv WHERE pcv.company_id = NEW.id AND mrr_change <> 0
      UNION ALL
      SELECT v.post_id, 0, m.weight_change FROM (
        SELECT l.end_user_id,
          chorus_plans_weight(ws, ARRAY(SELECT c.plan FROM end_user_companies cl JOIN companies c ON c.id = cl.company_id WHERE cl.end_user_id = l.end_user_id))
          - chorus_plans_weight(ws, ARRAY(SELECT CASE WHEN c.id = NEW.id THEN OLD.plan ELSE c.plan END FROM end_user_companies cl JOIN companies c ON c.id = cl.company_id WHERE cl.end_user_id = l.end_user_id)) AS weight_change
        FROM end_user_companies l JOIN end_users e ON e.id = l.end_user_id AND e.verified_at IS NOT NULL
        WHERE l.company_id = NEW.id AND NEW.plan IS DISTINCT FROM OLD.plan
      ) m JOIN votes v ON v.end_user_id = m.end_user_id WHERE m.weight_change <> 0
    ) shifts GROUP BY post_id
  ) per_post;
  PERFORM chorus_demand_shift(NEW.workspace_id, shift_posts, mrr_shifts, weighted_shifts);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- The per-row triggers of 0053, standing aside while a set-based writer has scored its own statement.
DROP TRIGGER "posts_demand_score" ON "posts";
--> statement-breakpoint
CREATE TRIGGER "posts_demand_score" BEFORE UPDATE OF "vote_count", "demand_verified_voters", "demand_companies", "demand_mrr", "demand_weighted" ON "posts" FOR EACH ROW
  WHEN (current_setting('chorus.demand_scored', true) IS DISTINCT FROM 'on'
    AND (OLD.vote_count, OLD.demand_verified_voters, OLD.demand_companies, OLD.demand_mrr, OLD.demand_weighted) IS DISTINCT FROM (NEW.vote_count, NEW.demand_verified_voters, NEW.demand_companies, NEW.demand_mrr, NEW.demand_weighted))
  EXECUTE FUNCTION chorus_demand_score();
--> statement-breakpoint
DROP TRIGGER "posts_demand_score_event" ON "posts";
--> statement-breakpoint
CREATE TRIGGER "posts_demand_score_event" AFTER UPDATE ON "posts" FOR EACH ROW
  WHEN (current_setting('chorus.demand_scored', true) IS DISTINCT FROM 'on' AND OLD.score IS DISTINCT FROM NEW.score
    AND (OLD.vote_count, OLD.demand_verified_voters, OLD.demand_companies, OLD.demand_mrr, OLD.demand_weighted) IS DISTINCT FROM (NEW.vote_count, NEW.demand_verified_voters, NEW.demand_companies, NEW.demand_mrr, NEW.demand_weighted))
  EXECUTE FUNCTION chorus_demand_score_event();
--> statement-breakpoint
-- Events queued for dispatch (migration 0005) one statement per statement of events instead of one
-- trigger call and insert per event: a set-based writer's 10,000 events were 10,000 calls.
DROP TRIGGER "events_queue_dispatch" ON "events";
--> statement-breakpoint
DROP FUNCTION chorus_queue_event_dispatch();
--> statement-breakpoint
CREATE FUNCTION chorus_queue_event_dispatch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_dispatch (event_id) SELECT id FROM new_events;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "events_queue_dispatch" AFTER INSERT ON "events" REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION chorus_queue_event_dispatch();
