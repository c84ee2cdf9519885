import { t } from 'elysia'
import { Enum } from '../../lib/schema.ts'
import { PostResponse } from '../posts/model.ts'
import { Timestamp } from '../user/model.ts'

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
  votes: t.Object({ total: Count }),
  comments: t.Object({ total: Count, public: Count, internal: Count }),
  end_users: t.Object({ total: Count }),
  trend: t.Array(t.Object({
    date: t.String({ format: 'date', examples: ['2026-11-22'] }),
    posts: Count,
    votes: Count,
    comments: Count,
  }), { description: 'The last 30 UTC days, oldest first, today last; days without activity are zeros' }),
}, { description: 'WorkspaceMetrics' })

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
}, { description: 'DashboardResponse' })

export const OnboardingProgress = t.Object({
  board_created: t.Boolean(),
  first_post: t.Boolean(),
  teammate_invited: t.Boolean({ description: 'Someone besides the owner was invited (accepted or not)' }),
  api_key_created: t.Boolean(),
  webhook_added: t.Boolean(),
  widget_seen: t.Boolean({ description: 'A post was authored by an end user' }),
  completed: t.Integer({ description: 'How many of the steps above are done' }),
  total: t.Integer(),
}, { additionalProperties: true, description: 'OnboardingProgress' })
