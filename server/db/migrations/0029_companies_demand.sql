-- Companies, revenue-weighted demand and scores (issue 37, docs/demand.md).
--
-- A post's demand is stored on the post (demand_* columns) and kept current by triggers, so every write
-- that changes it (a vote or unvote, a merge moving votes, an e-mail confirmation, a company's MRR or
-- plan, a user joining or leaving a company, a deleted end user or company) updates it in the same
-- transaction, whichever module made the write. Lists sort on the stored figures through indexes; no
-- read recounts a board. post_company_votes holds, per post and company, how many verified voters of
-- that company voted: it is what lets a company count once however many of its people vote, and what
-- an MRR change walks to reach every post the company voted for.
CREATE TABLE "companies" (
  "id" text PRIMARY KEY,
  "workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE CASCADE,
  "external_id" text NOT NULL,
  "name" text NOT NULL,
  "mrr" bigint NOT NULL DEFAULT 0,
  "currency" text NOT NULL DEFAULT 'USD',
  "plan" text,
  "seats" integer,
  "attributes" jsonb NOT NULL DEFAULT '{}',
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE UNIQUE INDEX "companies_workspace_external_key" ON "companies" ("workspace_id", "external_id");
--> statement-breakpoint
CREATE INDEX "companies_workspace_id_idx" ON "companies" ("workspace_id", "id");
--> statement-breakpoint
CREATE TABLE "end_user_companies" (
  "end_user_id" text NOT NULL REFERENCES "end_users"("id") ON DELETE CASCADE,
  "company_id" text NOT NULL REFERENCES "companies"("id") ON DELETE CASCADE,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  PRIMARY KEY ("end_user_id", "company_id")
);
--> statement-breakpoint
CREATE INDEX "end_user_companies_company_idx" ON "end_user_companies" ("company_id");
--> statement-breakpoint
CREATE TABLE "post_company_votes" (
  "post_id" text NOT NULL REFERENCES "posts"("id") ON DELETE CASCADE,
  "company_id" text NOT NULL REFERENCES "companies"("id") ON DELETE CASCADE,
  "voters" integer NOT NULL,
  PRIMARY KEY ("post_id", "company_id")
);
--> statement-breakpoint
CREATE INDEX "post_company_votes_company_idx" ON "post_company_votes" ("company_id", "post_id");
--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "demand_verified_voters" integer NOT NULL DEFAULT 0,
  ADD COLUMN "demand_companies" integer NOT NULL DEFAULT 0,
  ADD COLUMN "demand_mrr" bigint NOT NULL DEFAULT 0,
  ADD COLUMN "demand_weighted" double precision NOT NULL DEFAULT 0,
  ADD COLUMN "factors" jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN "score" double precision;
--> statement-breakpoint
-- The history of a post's factors and score (staff only).
CREATE TABLE "score_changes" (
  "id" text PRIMARY KEY,
  "post_id" text NOT NULL REFERENCES "posts"("id") ON DELETE CASCADE,
  "factors" jsonb NOT NULL,
  "from_score" double precision,
  "to_score" double precision,
  "changed_by_user_id" text,
  "changed_by_key_id" text,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX "score_changes_post_idx" ON "score_changes" ("post_id", "created_at");
--> statement-breakpoint
CREATE INDEX "posts_list_mrr_idx" ON "posts" USING btree ("board_id", "demand_mrr" DESC, "created_at" DESC, "id" DESC) INCLUDE ("status_id", "label_ids") WHERE merged_into_id IS NULL;
--> statement-breakpoint
CREATE INDEX "posts_list_companies_idx" ON "posts" USING btree ("board_id", "demand_companies" DESC, "created_at" DESC, "id" DESC) INCLUDE ("status_id", "label_ids") WHERE merged_into_id IS NULL;
--> statement-breakpoint
CREATE INDEX "posts_list_score_idx" ON "posts" USING btree ("board_id", "score" DESC NULLS LAST, "created_at" DESC, "id" DESC) INCLUDE ("status_id", "label_ids") WHERE merged_into_id IS NULL;
--> statement-breakpoint
-- A company's MRR as demand counts it: only in the workspace's revenue currency (settings.demand.currency, default USD).
CREATE FUNCTION chorus_counted_mrr(settings jsonb, mrr bigint, currency text) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN currency = coalesce(settings->'demand'->>'currency', 'USD') THEN mrr ELSE 0 END
$$;
--> statement-breakpoint
-- A voter's weight: the highest weight among the plans of their companies (settings.demand.plan_weights),
-- a plan without a weight (or no company) weighing settings.demand.default_weight, default 1.
CREATE FUNCTION chorus_plans_weight(settings jsonb, plans text[]) RETURNS double precision LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(
    (SELECT max(coalesce((settings->'demand'->'plan_weights'->>plan)::double precision, (settings->'demand'->>'default_weight')::double precision, 1)) FROM unnest(plans) AS plan),
    (settings->'demand'->>'default_weight')::double precision, 1)
$$;
--> statement-breakpoint
-- Adds (sign 1) or removes (sign -1) one vote's share of a post's demand. A member's vote is verified
-- and has no company; an end user's counts once their identity is verified (`check_verified` false: the
-- caller knows it counted, e.g. the confirmation being taken back). Companies are locked FOR SHARE, so
-- an MRR change waits for this vote's transaction (and the reverse): neither misses the other's row.
CREATE FUNCTION chorus_demand_vote(vote_post text, vote_end_user text, sign int, check_verified boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  ws jsonb;
  is_verified boolean;
  plans text[] := '{}';
  company record;
  voters int;
  companies_change int := 0;
  mrr_change bigint := 0;
BEGIN
  SELECT w.settings INTO ws FROM posts p JOIN workspaces w ON w.id = p.workspace_id WHERE p.id = vote_post;
  -- The post itself is being deleted (a cascade): nothing to keep.
  IF NOT FOUND THEN RETURN; END IF;
  IF vote_end_user IS NOT NULL THEN
    IF check_verified THEN
      SELECT verified_at IS NOT NULL INTO is_verified FROM end_users WHERE id = vote_end_user;
      IF NOT coalesce(is_verified, false) THEN RETURN; END IF;
    END IF;
    FOR company IN SELECT c.id, c.mrr, c.currency, c.plan FROM end_user_companies l JOIN companies c ON c.id = l.company_id
        WHERE l.end_user_id = vote_end_user ORDER BY c.id FOR SHARE OF c LOOP
      plans := plans || company.plan;
      IF sign > 0 THEN
        INSERT INTO post_company_votes AS pcv (post_id, company_id, voters) VALUES (vote_post, company.id, 1)
          ON CONFLICT (post_id, company_id) DO UPDATE SET voters = pcv.voters + 1 RETURNING pcv.voters INTO voters;
        IF voters = 1 THEN
          companies_change := companies_change + 1;
          mrr_change := mrr_change + chorus_counted_mrr(ws, company.mrr, company.currency);
        END IF;
      ELSE
        UPDATE post_company_votes SET voters = post_company_votes.voters - 1 WHERE post_id = vote_post AND company_id = company.id RETURNING post_company_votes.voters INTO voters;
        IF voters = 0 THEN
          DELETE FROM post_company_votes WHERE post_id = vote_post AND company_id = company.id;
          companies_change := companies_change - 1;
          mrr_change := mrr_change - chorus_counted_mrr(ws, company.mrr, company.currency);
        END IF;
      END IF;
    END LOOP;
  END IF;
  UPDATE posts SET demand_verified_voters = demand_verified_voters + sign, demand_companies = demand_companies + companies_change,
    demand_mrr = demand_mrr + mrr_change, demand_weighted = demand_weighted + sign * chorus_plans_weight(ws, plans)
  WHERE id = vote_post;
END $$;
--> statement-breakpoint
CREATE FUNCTION chorus_votes_demand() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM chorus_demand_vote(OLD.post_id, OLD.end_user_id, -1, true); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM chorus_demand_vote(NEW.post_id, NEW.end_user_id, 1, true); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "votes_demand" AFTER INSERT OR DELETE OR UPDATE OF "post_id", "end_user_id", "user_id" ON "votes" FOR EACH ROW EXECUTE FUNCTION chorus_votes_demand();
--> statement-breakpoint
-- An end user confirming their address (or losing the confirmation) adds (removes) their votes' demand.
CREATE FUNCTION chorus_end_user_verified_demand() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE vote record;
BEGIN
  FOR vote IN SELECT post_id FROM votes WHERE end_user_id = NEW.id ORDER BY post_id LOOP
    PERFORM chorus_demand_vote(vote.post_id, NEW.id, CASE WHEN NEW.verified_at IS NULL THEN -1 ELSE 1 END, false);
  END LOOP;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "end_users_verified_demand" AFTER UPDATE OF "verified_at" ON "end_users" FOR EACH ROW
  WHEN ((OLD.verified_at IS NULL) <> (NEW.verified_at IS NULL)) EXECUTE FUNCTION chorus_end_user_verified_demand();
--> statement-breakpoint
-- Before an end user goes, their votes go (taking their demand with them) while their companies are still linked.
CREATE FUNCTION chorus_end_user_deleted_demand() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM votes WHERE end_user_id = OLD.id;
  RETURN OLD;
END $$;
--> statement-breakpoint
CREATE TRIGGER "end_users_deleted_demand" BEFORE DELETE ON "end_users" FOR EACH ROW EXECUTE FUNCTION chorus_end_user_deleted_demand();
--> statement-breakpoint
-- A user joining (leaving) a company: the company gains (loses) that user's verified votes, and each of
-- those votes weighs by the user's plans after the change instead of before.
CREATE FUNCTION chorus_link_demand() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  link record;
  ws jsonb;
  company record;
  plans_now text[];
  plans_before text[];
  weight_change double precision;
  vote record;
  voters int;
  sign int := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
  IF TG_OP = 'INSERT' THEN link := NEW; ELSE link := OLD; END IF;
  SELECT c.id, c.mrr, c.currency, c.plan, w.settings INTO company FROM companies c JOIN workspaces w ON w.id = c.workspace_id WHERE c.id = link.company_id FOR SHARE OF c;
  IF NOT FOUND THEN RETURN NULL; END IF;
  ws := company.settings;
  IF NOT EXISTS (SELECT 1 FROM end_users WHERE id = link.end_user_id AND verified_at IS NOT NULL) THEN RETURN NULL; END IF;
  plans_now := ARRAY(SELECT c.plan FROM end_user_companies l JOIN companies c ON c.id = l.company_id WHERE l.end_user_id = link.end_user_id);
  plans_before := CASE WHEN sign > 0
    THEN ARRAY(SELECT c.plan FROM end_user_companies l JOIN companies c ON c.id = l.company_id WHERE l.end_user_id = link.end_user_id AND c.id <> link.company_id)
    ELSE plans_now || company.plan END;
  weight_change := chorus_plans_weight(ws, plans_now) - chorus_plans_weight(ws, plans_before);
  FOR vote IN SELECT post_id FROM votes WHERE end_user_id = link.end_user_id ORDER BY post_id LOOP
    IF sign > 0 THEN
      INSERT INTO post_company_votes AS pcv (post_id, company_id, voters) VALUES (vote.post_id, company.id, 1)
        ON CONFLICT (post_id, company_id) DO UPDATE SET voters = pcv.voters + 1 RETURNING pcv.voters INTO voters;
    ELSE
      UPDATE post_company_votes SET voters = post_company_votes.voters - 1 WHERE post_id = vote.post_id AND company_id = company.id RETURNING post_company_votes.voters INTO voters;
      IF voters = 0 THEN DELETE FROM post_company_votes WHERE post_id = vote.post_id AND company_id = company.id; END IF;
    END IF;
    UPDATE posts SET
      demand_companies = demand_companies + CASE WHEN (sign > 0 AND voters = 1) OR (sign < 0 AND voters = 0) THEN sign ELSE 0 END,
      demand_mrr = demand_mrr + CASE WHEN (sign > 0 AND voters = 1) OR (sign < 0 AND voters = 0) THEN sign * chorus_counted_mrr(ws, company.mrr, company.currency) ELSE 0 END,
      demand_weighted = demand_weighted + weight_change
    WHERE id = vote.post_id;
  END LOOP;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "end_user_companies_demand" AFTER INSERT OR DELETE ON "end_user_companies" FOR EACH ROW EXECUTE FUNCTION chorus_link_demand();
--> statement-breakpoint
-- A company's MRR or currency change moves every post it voted for by the difference, in one statement;
-- a plan change re-weighs its members' votes. A company about to be deleted first loses its members
-- (the link trigger takes its demand off each post).
CREATE FUNCTION chorus_company_demand() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ws jsonb;
  mrr_change bigint;
  member record;
  vote record;
  plans_now text[];
  weight_change double precision;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM end_user_companies WHERE company_id = OLD.id;
    RETURN OLD;
  END IF;
  SELECT settings INTO ws FROM workspaces WHERE id = NEW.workspace_id;
  mrr_change := chorus_counted_mrr(ws, NEW.mrr, NEW.currency) - chorus_counted_mrr(ws, OLD.mrr, OLD.currency);
  IF mrr_change <> 0 THEN
    UPDATE posts SET demand_mrr = demand_mrr + mrr_change WHERE id IN (SELECT post_id FROM post_company_votes WHERE company_id = NEW.id);
  END IF;
  IF NEW.plan IS DISTINCT FROM OLD.plan THEN
    FOR member IN SELECT l.end_user_id FROM end_user_companies l JOIN end_users e ON e.id = l.end_user_id AND e.verified_at IS NOT NULL WHERE l.company_id = NEW.id LOOP
      plans_now := ARRAY(SELECT c.plan FROM end_user_companies l JOIN companies c ON c.id = l.company_id WHERE l.end_user_id = member.end_user_id);
      weight_change := chorus_plans_weight(ws, plans_now) - chorus_plans_weight(ws,
        ARRAY(SELECT CASE WHEN c.id = NEW.id THEN OLD.plan ELSE c.plan END FROM end_user_companies l JOIN companies c ON c.id = l.company_id WHERE l.end_user_id = member.end_user_id));
      IF weight_change <> 0 THEN
        UPDATE posts SET demand_weighted = demand_weighted + weight_change WHERE id IN (SELECT post_id FROM votes WHERE end_user_id = member.end_user_id);
      END IF;
    END LOOP;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "companies_demand" AFTER UPDATE OF "mrr", "currency", "plan" ON "companies" FOR EACH ROW EXECUTE FUNCTION chorus_company_demand();
--> statement-breakpoint
CREATE TRIGGER "companies_deleted_demand" BEFORE DELETE ON "companies" FOR EACH ROW EXECUTE FUNCTION chorus_company_demand();
--> statement-breakpoint
-- Every post of a workspace recounted from its votes: after a change of the workspace's revenue currency
-- or plan weights (rare, an admin's setting), and once here for the posts that existed before.
CREATE FUNCTION chorus_demand_recount(recount_workspace text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE ws jsonb;
BEGIN
  SELECT settings INTO ws FROM workspaces WHERE id = recount_workspace;
  DELETE FROM post_company_votes WHERE post_id IN (SELECT id FROM posts WHERE workspace_id = recount_workspace);
  INSERT INTO post_company_votes (post_id, company_id, voters)
    SELECT v.post_id, l.company_id, count(*) FROM votes v JOIN end_users e ON e.id = v.end_user_id AND e.verified_at IS NOT NULL
      JOIN end_user_companies l ON l.end_user_id = e.id WHERE v.workspace_id = recount_workspace GROUP BY v.post_id, l.company_id;
  UPDATE posts p SET
    demand_verified_voters = coalesce(v.voters, 0), demand_weighted = coalesce(v.weighted, 0),
    demand_companies = coalesce(c.companies, 0), demand_mrr = coalesce(c.mrr, 0)
  FROM posts q
    LEFT JOIN LATERAL (
      SELECT count(*) AS voters, sum(chorus_plans_weight(ws, ARRAY(SELECT co.plan FROM end_user_companies l JOIN companies co ON co.id = l.company_id WHERE l.end_user_id = vv.end_user_id))) AS weighted
      FROM votes vv LEFT JOIN end_users e ON e.id = vv.end_user_id
      WHERE vv.post_id = q.id AND (vv.end_user_id IS NULL OR e.verified_at IS NOT NULL)
    ) v ON true
    LEFT JOIN LATERAL (
      SELECT count(*) AS companies, sum(chorus_counted_mrr(ws, co.mrr, co.currency)) AS mrr
      FROM post_company_votes pcv JOIN companies co ON co.id = pcv.company_id WHERE pcv.post_id = q.id
    ) c ON true
  WHERE p.id = q.id AND q.workspace_id = recount_workspace;
END $$;
--> statement-breakpoint
UPDATE "posts" p SET "demand_verified_voters" = v.voters, "demand_weighted" = v.voters
  FROM (SELECT vv.post_id, count(*) AS voters FROM votes vv LEFT JOIN end_users e ON e.id = vv.end_user_id
    WHERE vv.end_user_id IS NULL OR e.verified_at IS NOT NULL GROUP BY vv.post_id) v
  WHERE v.post_id = p.id;
--> statement-breakpoint
-- The page walk of migration 0022 with the sorts of this migration, each over its own index.
CREATE OR REPLACE FUNCTION chorus_post_page(list_board text, list_status text, list_sort text, page_limit int, page_offset int) RETURNS text[] LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF list_sort = 'top' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY vote_count DESC, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'trending' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY trending DESC NULLS LAST, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'mrr' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY demand_mrr DESC, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'companies' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY demand_companies DESC, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'score' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY score DESC NULLS LAST, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  END IF;
  RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
    ORDER BY created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
END $$;
