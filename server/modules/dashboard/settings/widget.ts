import { and, asc, eq } from 'drizzle-orm'
import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { boards, JWT_ALGORITHMS, type JwtAlgorithm } from '../../../db/schema/index.ts'
import { ApiError } from '../../../errors.ts'
import { checkToken, createJwtConfig, findJwtConfig, rotateSecret } from '../../jwt-config/service.ts'
import type { WorkspaceViewer } from '../context.ts'
import { dashboardGuards, hasRole, requireRole, text, type Form } from '../guard.ts'
import { hidden, isFormError, messageOf, noticeOf, requireConfirmation, settingsPath, urlencoded, widgetPreviewPage, type Rendered } from './kit.ts'
import { WIDGET_OPTIONS, widgetView, type WidgetOptions, type WidgetView } from './widget-view.ts'

// Widget and identity (issue 35, page 5): the snippet and live preview for every member; the JWT setup
// and the token check for admins, over the jwt-config service (the routes of /workspaces/{slug}/jwt-config).

const pick = (values: readonly string[], value: unknown, fallback: string) => (typeof value === 'string' && values.includes(value) ? value : fallback)
const optional = (value: unknown) => text(value).trim() || undefined

export const widgetSettings = (ctx: AppContext) => {
  const { inWorkspace } = dashboardGuards(ctx)

  async function render(viewer: WorkspaceViewer, query: Record<string, unknown>, rendered: Rendered & Pick<WidgetView, 'secret' | 'check'> = {}) {
    const admin = hasRole(viewer, 'admin')
    const boardRows = await ctx.db.select({ slug: boards.slug, name: boards.name }).from(boards)
      .where(and(eq(boards.workspaceId, viewer.workspace.id), eq(boards.isPrivate, false))).orderBy(asc(boards.name))
    const options: WidgetOptions = {
      theme: pick(WIDGET_OPTIONS.theme, query.theme, 'auto'),
      position: pick(WIDGET_OPTIONS.position, query.position, 'bottom-right'),
      locale: pick(WIDGET_OPTIONS.locale, query.locale, ''),
      board: pick(boardRows.map((b) => b.slug), query.board, ''),
    }
    const config = admin ? await findJwtConfig(ctx, viewer.workspace.id) : null
    return widgetPreviewPage(viewer, 'Widget', widgetView({
      slug: viewer.workspace.slug, csrf: viewer.csrf, baseUrl: ctx.config.baseUrl, admin, boards: boardRows, options, config, secret: rendered.secret, check: rendered.check,
    }), rendered)
  }
  /** An admin's identify form: its answer is this page (a secret is shown in it once), or the page with the reason. */
  const act = (run: (viewer: WorkspaceViewer, body: Form) => Promise<Rendered & Pick<WidgetView, 'secret' | 'check'>>) => inWorkspace(async (viewer, { body }) => {
    requireRole(viewer, 'admin')
    try {
      return render(viewer, {}, await run(viewer, body))
    } catch (error) {
      if (!isFormError(error)) throw error
      return render(viewer, {}, { error: messageOf(error), status: error.status })
    }
  })

  return new Elysia({ name: 'dashboard-settings-widget' })
    .get('/dashboard/:workspace_slug/settings/widget', inWorkspace(async (viewer, { query }) => render(viewer, query, { notice: noticeOf(query) })), hidden)
    .post('/dashboard/:workspace_slug/settings/widget/jwt', act(async (viewer, body) => {
      const algorithm = text(body.algorithm) as JwtAlgorithm
      if (!JWT_ALGORITHMS.includes(algorithm)) throw new ApiError('VALIDATION_ERROR', 'Choose an algorithm.')
      const hs = algorithm === 'HS256'
      const { secret } = await createJwtConfig(ctx, viewer.workspace.id, {
        algorithm, public_key: hs ? undefined : optional(body.public_key), jwks_url: hs ? undefined : optional(body.jwks_url), issuer: optional(body.issuer), audience: optional(body.audience),
      })
      return { secret: secret ? { value: secret } : undefined, notice: 'Identify is set up', status: 201 }
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/widget/jwt/rotate', act(async (viewer, body) => {
      requireConfirmation(body, 'rotate the signing secret')
      const overlap = text(body.overlap) === '0' ? 0 : 86_400
      const { row, secret } = await rotateSecret(ctx, viewer.workspace.id, overlap)
      return { secret: { value: secret, overlapUntil: row.previousSecretExpiresAt }, notice: 'Secret rotated' }
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/widget/check', act(async (viewer, body) => {
      const token = text(body.token).trim()
      if (!token || token.length > 16_384) throw new ApiError('VALIDATION_ERROR', 'Paste a token to check.')
      return { check: await checkToken(ctx, viewer.workspace.id, token) }
    }), urlencoded)
}

