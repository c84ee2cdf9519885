import { and, asc, count, desc, eq, inArray, isNull, not, sql } from 'drizzle-orm'
import { rowsOf, type Db } from '../../db/client.ts'
import { comments, events, posts, statuses, type StatusKind } from '../../db/schema/index.ts'
import { findPosts } from '../posts/queries.ts'

// Read-only views of one workspace for its members and keys. Each is a fixed handful of aggregate
// queries, whatever the size of the workspace. Merged posts are duplicates folded into another post,
// so they are left out of every post count, as they are left out of the lists.

const OPEN_KINDS: StatusKind[] = ['open', 'planned', 'in_progress']
const TREND_DAYS = 30

/** A post counts as answered once a member or an API key (the team) replied in public; internal notes do not answer the customer. */
const answered = sql`exists (select 1 from ${comments} where ${comments.postId} = ${posts.id} and not ${comments.internal} and (${comments.authorUserId} is not null or ${comments.authorKeyId} is not null))`
const stillOpen = and(isNull(posts.mergedIntoId), inArray(statuses.kind, OPEN_KINDS))

interface Counts { posts: number; open_posts: number; unanswered_posts: number; votes: number; verified_votes: number; public_comments: number; internal_comments: number; end_users: number; verified_end_users: number }

async function counts(db: Db, workspaceId: string): Promise<Counts> {
  const open = sql`from ${posts} join ${statuses} on ${statuses.id} = ${posts.statusId} where ${posts.workspaceId} = ${workspaceId} and ${stillOpen}`
  const [row] = rowsOf<Counts>(await db.execute(sql`
    select
      (select count(*) from posts where workspace_id = ${workspaceId} and merged_into_id is null)::int as posts,
      (select count(*) ${open})::int as open_posts,
      (select count(*) ${open} and not ${answered})::int as unanswered_posts,
      (select count(*) from votes where workspace_id = ${workspaceId})::int as votes,
      (select count(*) from votes v where v.workspace_id = ${workspaceId} and not exists (select 1 from end_users e where e.id = v.end_user_id and e.verified_at is null))::int as verified_votes,
      (select count(*) from comments where workspace_id = ${workspaceId} and not internal)::int as public_comments,
      (select count(*) from comments where workspace_id = ${workspaceId} and internal)::int as internal_comments,
      (select count(*) from end_users where workspace_id = ${workspaceId})::int as end_users,
      (select count(*) from end_users where workspace_id = ${workspaceId} and verified_at is not null)::int as verified_end_users`))
  return row!
}

/** Posts, votes, comments per UTC day over the last 30 days, zero-filled by generate_series. */
async function trend(db: Db, workspaceId: string) {
  return rowsOf<{ date: string; posts: number; votes: number; comments: number }>(await db.execute(sql`
    with daily as (
      select 'post' as kind, (created_at at time zone 'utc')::date as day, count(*) as n from posts
        where workspace_id = ${workspaceId} and merged_into_id is null and created_at >= now() - interval '31 days' group by 2
      union all
      select 'vote', (created_at at time zone 'utc')::date, count(*) from votes
        where workspace_id = ${workspaceId} and created_at >= now() - interval '31 days' group by 2
      union all
      select 'comment', (created_at at time zone 'utc')::date, count(*) from comments
        where workspace_id = ${workspaceId} and created_at >= now() - interval '31 days' group by 2
    )
    select to_char(d.day, 'YYYY-MM-DD') as date,
      coalesce(sum(n) filter (where kind = 'post'), 0)::int as posts,
      coalesce(sum(n) filter (where kind = 'vote'), 0)::int as votes,
      coalesce(sum(n) filter (where kind = 'comment'), 0)::int as comments
    from generate_series((now() at time zone 'utc')::date - ${TREND_DAYS - 1}::int, (now() at time zone 'utc')::date, interval '1 day') as d(day)
    left join daily on daily.day = d.day::date
    group by d.day
    order by d.day`))
}

export async function workspaceMetrics(db: Db, workspaceId: string) {
  const [totals, byStatus, days] = await Promise.all([
    counts(db, workspaceId),
    db.select({ status: statuses.name, status_id: statuses.id, status_kind: statuses.kind, count: count(posts.id) })
      .from(statuses)
      .leftJoin(posts, and(eq(posts.statusId, statuses.id), isNull(posts.mergedIntoId)))
      .where(eq(statuses.workspaceId, workspaceId))
      .groupBy(statuses.id)
      .orderBy(asc(statuses.position), asc(statuses.name)),
    trend(db, workspaceId),
  ])
  return {
    posts: { total: totals.posts, by_status: byStatus },
    // Anyone can type an address: weigh demand by the verified votes only (docs/widget.md).
    votes: { total: totals.votes, verified: totals.verified_votes },
    comments: { total: totals.public_comments + totals.internal_comments, public: totals.public_comments, internal: totals.internal_comments },
    end_users: { total: totals.end_users, verified: totals.verified_end_users },
    trend: days,
  }
}

const RECENT_EVENTS = 20
const LIST_SIZE = 10

/** The post an event is about: post events carry `post`, comment events `post_id`, vote events `vote.post_id`. */
const eventPostId = sql<string | null>`coalesce(${events.data}->'post'->>'id', ${events.data}->>'post_id', ${events.data}->'vote'->>'post_id')`

export async function workspaceDashboard(db: Db, workspaceId: string) {
  const inWorkspace = eq(posts.workspaceId, workspaceId)
  const [activity, top, unanswered, totals] = await Promise.all([
    db.select({ id: events.id, type: events.type, createdAt: events.createdAt, postId: eventPostId, title: sql<string | null>`coalesce(${posts.title}, ${events.data}->'post'->>'title')` })
      .from(events)
      .leftJoin(posts, eq(posts.id, eventPostId))
      .where(eq(events.workspaceId, workspaceId))
      .orderBy(desc(events.createdAt), desc(events.id))
      .limit(RECENT_EVENTS),
    findPosts(db, and(inWorkspace, stillOpen), [desc(posts.voteCount), desc(posts.createdAt)], LIST_SIZE),
    findPosts(db, and(inWorkspace, stillOpen, not(answered)), [asc(posts.createdAt)], LIST_SIZE),
    counts(db, workspaceId),
  ])
  return {
    recent_activity: activity.map((row) => ({ id: row.id, type: row.type, created_at: row.createdAt.toISOString(), post_id: row.postId, title: row.title })),
    top_posts: top,
    unanswered_posts: unanswered,
    counts: {
      posts: totals.posts,
      open_posts: totals.open_posts,
      unanswered_posts: totals.unanswered_posts,
      votes: totals.votes,
      comments: totals.public_comments + totals.internal_comments,
      end_users: totals.end_users,
    },
  }
}

export async function onboardingProgress(db: Db, workspaceId: string) {
  const [row] = rowsOf<{ board_created: boolean; first_post: boolean; teammate_invited: boolean; api_key_created: boolean; webhook_added: boolean; widget_seen: boolean }>(await db.execute(sql`
    select
      exists (select 1 from boards where workspace_id = ${workspaceId}) as board_created,
      exists (select 1 from posts where workspace_id = ${workspaceId}) as first_post,
      (select count(*) from members where workspace_id = ${workspaceId}) > 1 as teammate_invited,
      exists (select 1 from api_keys where workspace_id = ${workspaceId}) as api_key_created,
      exists (select 1 from webhooks where workspace_id = ${workspaceId}) as webhook_added,
      exists (select 1 from posts where workspace_id = ${workspaceId} and author_end_user_id is not null) as widget_seen`))
  const steps = {
    board_created: row!.board_created,
    first_post: row!.first_post,
    teammate_invited: row!.teammate_invited,
    api_key_created: row!.api_key_created,
    webhook_added: row!.webhook_added,
    widget_seen: row!.widget_seen,
  }
  const values = Object.values(steps)
  return { ...steps, completed: values.filter(Boolean).length, total: values.length }
}
