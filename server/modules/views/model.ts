import { t } from 'elysia'
import { Enum, Timestamp } from '../../lib/schema.ts'
import { PostResponse, postExample } from '../posts/model.ts'

const Count = t.Integer({ minimum: 0 })

export const WorkspaceMetrics = t.Object({
  posts: t.Object({
    total: t.Integer({ description: 'Posts, merged ones left out' }),
    by_status: t.Array(t.Object({
      status: t.String(),
      status_id: t.String(),
      status_kind: Enum(['open', 'planned', 'in_progress', 'complete', 'closed']),
      count: Count,
    }), { description: 'Every status of the workspace in workflow order, zeros included' }),
  }),
  votes: t.Object({ total: Count, verified: t.Integer({ minimum: 0, description: 'Votes of members and verified end users: unconfirmed anonymous visitors (`verified: false`) are left out. Weigh demand by this' }) }),
  comments: t.Object({ total: Count, public: Count, internal: Count }),
  end_users: t.Object({ total: Count, verified: t.Integer({ minimum: 0, description: 'Identified end users and anonymous visitors who confirmed their e-mail address' }) }),
  trend: t.Array(t.Object({
    date: t.String({ format: 'date', examples: ['2026-11-22'] }),
    posts: Count,
    votes: Count,
    comments: Count,
  }), { description: 'The last 30 UTC days, oldest first, today last; days without activity are zeros' }),
}, { $id: 'WorkspaceMetrics', examples: [{ posts: { total: 42, by_status: [{ status: 'Planned', status_id: 'sts_0mi9x2k3aq1b2c3d4e5f6g7h8', status_kind: 'planned', count: 7 }] }, votes: { total: 310, verified: 296 }, comments: { total: 57, public: 50, internal: 7 }, end_users: { total: 120, verified: 104 }, trend: [{ date: '2026-11-22', posts: 3, votes: 21, comments: 4 }] }] })

export const DashboardResponse = t.Object({
  recent_activity: t.Array(t.Object({
    id: t.String({ description: 'The event id (evt_...)' }),
    type: t.String({ description: 'The event kind, e.g. post.created' }),
    created_at: Timestamp,
    post_id: t.Nullable(t.String()),
    title: t.Nullable(t.String({ description: "The post's current title, or its title when the event was recorded if it is gone" })),
  }), { description: 'The latest 20 events, newest first' }),
  top_posts: t.Array(PostResponse, { description: 'The 10 most-voted posts in open, planned or in-progress statuses' }),
  unanswered_posts: t.Array(PostResponse, { description: 'The 10 oldest open, planned or in-progress posts without a public comment from a member or an API key' }),
  counts: t.Object({
    posts: Count,
    open_posts: t.Integer({ minimum: 0, description: 'In open, planned or in-progress statuses' }),
    unanswered_posts: Count,
    votes: Count,
    comments: Count,
    end_users: Count,
  }),
}, { $id: 'Dashboard', examples: [{ counts: { posts: 42, open_posts: 30, votes: 310, comments: 57, end_users: 120, unanswered_posts: 4 }, top_posts: [postExample], unanswered_posts: [], recent_activity: [{ type: 'post.created', id: 'evt_0mi9x2k3aq1b2c3d4e5f6g7h8', post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', title: 'Dark mode', created_at: '2026-11-22T09:30:00.000Z' }] }] })

export const OnboardingProgress = t.Object({
  board_created: t.Boolean(),
  first_post: t.Boolean(),
  teammate_invited: t.Boolean({ description: 'Someone besides the owner was invited (accepted or not)' }),
  api_key_created: t.Boolean(),
  webhook_added: t.Boolean(),
  widget_seen: t.Boolean({ description: 'A post was authored by an end user' }),
  completed: t.Integer({ description: 'How many of the steps above are done' }),
  total: t.Integer(),
}, { additionalProperties: true, $id: 'OnboardingProgress', examples: [{ board_created: true, first_post: true, api_key_created: true, webhook_added: false, teammate_invited: false, widget_seen: true, completed: 4, total: 6 }] })
