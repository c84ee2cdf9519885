-- Set-based demand for bulk vote writes (issue 39, docs/import.md#how-an-import-runs). The per-row
-- votes_demand trigger costs a few lookups and an update of the post for every vote; an import writes
-- thousands of votes a statement. With `chorus.bulk_votes` set to 'on' for its transaction
-- (set_config(..., true): it ends with the transaction) the trigger stands aside, and the writer
-- recounts the posts it touched with chorus_demand_recount_posts in one statement per batch.
CREATE OR REPLACE FUNCTION chorus_votes_demand() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('chorus.bulk_votes', true) = 'on' THEN RETURN NULL; END IF;
  IF TG_OP <> 'INSERT' THEN PERFORM chorus_demand_vote(OLD.post_id, OLD.end_user_id, -1, true); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM chorus_demand_vote(NEW.post_id, NEW.end_user_id, 1, true); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- These posts' demand recounted from their votes (what the trigger keeps current one vote at a time).
CREATE FUNCTION chorus_demand_recount_posts(recount_posts text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM post_company_votes WHERE post_id = ANY(recount_posts);
  INSERT INTO post_company_votes (post_id, company_id, voters)
    SELECT v.post_id, l.company_id, count(*) FROM votes v JOIN end_users e ON e.id = v.end_user_id AND e.verified_at IS NOT NULL
      JOIN end_user_companies l ON l.end_user_id = e.id WHERE v.post_id = ANY(recount_posts) GROUP BY v.post_id, l.company_id;
  UPDATE posts p SET
    demand_verified_voters = coalesce(v.voters, 0), demand_weighted = coalesce(v.weighted, 0),
    demand_companies = coalesce(c.companies, 0), demand_mrr = coalesce(c.mrr, 0)
  FROM posts q
    JOIN workspaces w ON w.id = q.workspace_id
    LEFT JOIN LATERAL (
      SELECT count(*) AS voters, sum(chorus_plans_weight(w.settings, ARRAY(SELECT co.plan FROM end_user_companies l JOIN companies co ON co.id = l.company_id WHERE l.end_user_id = vv.end_user_id))) AS weighted
      FROM votes vv LEFT JOIN end_users e ON e.id = vv.end_user_id
      WHERE vv.post_id = q.id AND (vv.end_user_id IS NULL OR e.verified_at IS NOT NULL)
    ) v ON true
    LEFT JOIN LATERAL (
      SELECT count(*) AS companies, sum(chorus_counted_mrr(w.settings, co.mrr, co.currency)) AS mrr
      FROM post_company_votes pcv JOIN companies co ON co.id = pcv.company_id WHERE pcv.post_id = q.id
    ) c ON true
  WHERE p.id = q.id AND q.id = ANY(recount_posts)
    -- A post whose demand stays (unverified voters only, the usual import) is not rewritten.
    AND (p.demand_verified_voters, p.demand_weighted, p.demand_companies, p.demand_mrr)
      IS DISTINCT FROM (coalesce(v.voters, 0), coalesce(v.weighted, 0), coalesce(c.companies, 0), coalesce(c.mrr, 0));
END $$;
--> statement-breakpoint
-- The whole workspace's recount (migration 0029) is the same recount over all its posts.
CREATE OR REPLACE FUNCTION chorus_demand_recount(recount_workspace text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM chorus_demand_recount_posts(ARRAY(SELECT id FROM posts WHERE workspace_id = recount_workspace));
END $$;
