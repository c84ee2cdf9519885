import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { ApiError } from '../../../errors.ts'
import { SCOPES } from '../../../plugins/auth.ts'
import { createApiKey, listApiKeys, revokeApiKey } from '../../api-keys/service.ts'
import { deleteGrant, listGrants } from '../../oauth/grants.ts'
import { seeOther, type WorkspaceViewer } from '../context.ts'
import { dashboardGuards, hasRole, list, requireRole, text, withNotice } from '../guard.ts'
import { keysView, type KeysView } from './api-keys-view.ts'
import { hidden, isFormError, messageOf, noticeOf, requireConfirmation, settingsPage, settingsPath, urlencoded, type Rendered } from './kit.ts'

// API keys (issue 35, page 3) over the api-keys and OAuth grant services: keys are the admins' (as the
// API's admin-only routes), grants are listed as the API lists them (all for admins, one's own for a member).

const KNOWN = new Set<string>(SCOPES)

export const apiKeysSettings = (ctx: AppContext) => {
  const { inWorkspace } = dashboardGuards(ctx)
  const path = (viewer: WorkspaceViewer) => settingsPath(viewer.workspace.slug, 'api-keys')

  async function render(viewer: WorkspaceViewer, rendered: Rendered & Pick<KeysView, 'created' | 'typed'> = {}) {
    const admin = hasRole(viewer, 'admin')
    const [keys, grants] = await Promise.all([
      admin ? listApiKeys(ctx.db, viewer.workspace.id) : [],
      listGrants(ctx.db, viewer.session.user.id, viewer.workspace.id),
    ])
    return settingsPage(viewer, 'API keys', keysView({ slug: viewer.workspace.slug, csrf: viewer.csrf, admin, keys, grants, created: rendered.created, typed: rendered.typed }), rendered)
  }

  return new Elysia({ name: 'dashboard-settings-api-keys' })
    .get('/dashboard/:workspace_slug/settings/api-keys', inWorkspace(async (viewer, { query }) => render(viewer, { notice: noticeOf(query) })), hidden)
    .post('/dashboard/:workspace_slug/settings/api-keys', inWorkspace(async (viewer, { body }) => {
      requireRole(viewer, 'admin')
      const typed = { name: text(body.name).trim(), scopes: list(body.scopes) }
      try {
        if (!typed.name || typed.name.length > 100) throw new ApiError('VALIDATION_ERROR', 'Name the key (1 to 100 characters), after what uses it.')
        if (typed.scopes.length === 0) throw new ApiError('VALIDATION_ERROR', 'Tick at least one scope.')
        const unknown = typed.scopes.filter((scope) => !KNOWN.has(scope))
        if (unknown.length) throw new ApiError('VALIDATION_ERROR', `Unknown scope: ${unknown.join(', ')}`)
        const { key, secret } = await createApiKey(ctx.db, viewer.workspace.id, viewer.session.user.id, { name: typed.name, scopes: [...new Set(typed.scopes)] })
        // The one answer that carries the key: rendered here (never stored, never redirected to a GET that could show it again).
        return render(viewer, { created: { name: key.name, secret }, notice: `Key "${key.name}" created`, status: 201 })
      } catch (error) {
        if (!isFormError(error)) throw error
        return render(viewer, { error: messageOf(error), status: error.status, typed })
      }
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/api-keys/:key_id/revoke', inWorkspace(async (viewer, { params, body }) => {
      requireRole(viewer, 'admin')
      try {
        requireConfirmation(body, 'revoke the key')
        await revokeApiKey(ctx.db, viewer.workspace.id, params.key_id!)
        return seeOther(withNotice(path(viewer), 'Key revoked: requests with it are refused from now on'))
      } catch (error) {
        if (!isFormError(error)) throw error
        return render(viewer, { error: messageOf(error), status: error.status })
      }
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/api-keys/grants/:family_id/revoke', inWorkspace(async (viewer, { params, body }) => {
      try {
        requireConfirmation(body, 'disconnect the app')
        const grant = (await listGrants(ctx.db, viewer.session.user.id, viewer.workspace.id)).find((g) => g.family_id === params.family_id)
        if (!grant) throw new ApiError('NOT_FOUND', 'Grant not found')
        await deleteGrant(ctx.db, viewer.session.user.id, grant.family_id)
        return seeOther(withNotice(path(viewer), `${grant.client_name} disconnected`))
      } catch (error) {
        if (!isFormError(error)) throw error
        return render(viewer, { error: messageOf(error), status: error.status })
      }
    }), urlencoded)
}
