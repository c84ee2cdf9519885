import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { DashboardResponse, OnboardingProgress, WorkspaceMetrics } from './model.ts'
import * as views from './service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['Workspaces']

/** The read-only views (dashboard, metrics, onboarding): for members (any role) and for keys with workspace:read. */
export const viewsModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug' })
    .use(authPlugin(ctx))
    .get('/metrics', ({ workspace }) => views.workspaceMetrics(ctx.db, workspace.id), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'workspace:read' },
      response: { 200: WorkspaceMetrics },
      detail: { operationId: 'getWorkspaceMetrics', tags, summary: 'Totals and a 30-day trend', description: 'Post totals by status (merged posts left out), votes, comments (public and internal), end users, and posts/votes/comments per UTC day for the last 30 days, zero-filled.' },
    })
    .get('/dashboard', ({ workspace }) => views.workspaceDashboard(ctx.db, workspace.id), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'workspace:read' },
      response: { 200: DashboardResponse },
      detail: { operationId: 'getWorkspaceDashboard', tags, summary: 'Recent activity, top and unanswered posts', description: 'The latest 20 events, the 10 most-voted posts still open (open, planned or in-progress statuses), the 10 oldest such posts that no member or key has answered with a public comment, and counts.' },
    })
    .get('/onboarding-progress', ({ workspace }) => views.onboardingProgress(ctx.db, workspace.id), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'workspace:read' },
      response: { 200: OnboardingProgress },
      detail: { operationId: 'getOnboardingProgress', tags, summary: 'Which getting-started steps are done', description: 'Booleans per step plus `completed` and `total`. `widget_seen` is true once an end user has authored a post.' },
    })
