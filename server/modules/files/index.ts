import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { notFound } from '../../errors.ts'
import { multipartBody } from '../../lib/upload.ts'
import { authPlugin, type WorkspaceContext } from '../../plugins/auth.ts'
import { toUserResponse, UserResponse } from '../user/model.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { toWorkspaceResponse, WorkspaceResponse } from '../workspaces/model.ts'
import { FileParams, ImageUpload, UPLOAD_RULES, uploadDescription } from './model.ts'
import { openFile, setAvatar, setWorkspaceImage } from './service.ts'

/** The parse hook reads the capped body itself; the declared type documents multipart and is what content-type checks see. */
const upload = (maxBytes: number) => [multipartBody(maxBytes), 'multipart/form-data' as const]

type ImageSlot = 'logo' | 'favicon'

/** A workspace image route: admins only; API keys get 403 DASHBOARD_ONLY. */
const imageRoute = (slot: ImageSlot, use: string) => ({
  params: WorkspaceSlugParams,
  workspace: { role: 'admin' as const },
  parse: upload(UPLOAD_RULES[slot].maxBytes),
  body: ImageUpload,
  response: { 200: WorkspaceResponse },
  detail: { operationId: slot === 'logo' ? 'uploadWorkspaceLogo' : 'uploadWorkspaceFavicon', tags: ['Workspaces'], summary: `Upload or replace the workspace ${slot} (admin)`, description: uploadDescription(slot, use) },
})

/** Avatar, logo and favicon uploads (dashboard sessions only: API keys get 403 DASHBOARD_ONLY). */
export const uploadsModule = (ctx: AppContext) => {
  const setImage = (slot: ImageSlot) => async ({ workspace, member, body }: Pick<WorkspaceContext, 'workspace' | 'member'> & { body: { file: File } }) =>
    toWorkspaceResponse(await setWorkspaceImage(ctx, workspace.id, slot, body.file), member!.role, ctx.config.baseUrl)
  return new Elysia()
    .use(authPlugin(ctx))
    .post('/user/profile/avatar', async ({ user, body }) => toUserResponse(await setAvatar(ctx, user.id, body.file), ctx.config.baseUrl), {
      user: true,
      parse: upload(UPLOAD_RULES.avatar.maxBytes),
      body: ImageUpload,
      response: { 200: UserResponse },
      detail: { operationId: 'uploadAvatar', tags: ['User'], summary: 'Upload or replace the avatar', description: uploadDescription('avatar', 'Returns the profile with the new `avatar_url`.') },
    })
    .delete('/user/profile/avatar', async ({ user }) => toUserResponse(await setAvatar(ctx, user.id, null), ctx.config.baseUrl), {
      user: true,
      response: { 200: UserResponse },
      detail: { operationId: 'deleteAvatar', tags: ['User'], summary: 'Remove the avatar', description: 'Deletes the stored file; `avatar_url` becomes null. Removing an absent avatar is not an error.' },
    })
    .post('/workspaces/:workspace_slug/logo', setImage('logo'), imageRoute('logo', 'The public portal, the widget panel header and outgoing e-mails show it.'))
    .post('/workspaces/:workspace_slug/favicon', setImage('favicon'), imageRoute('favicon', 'The public portal uses it.'))
}

const SERVED_HEADERS = {
  'x-content-type-options': 'nosniff',
  // Even a polyglot opened directly runs no script and loads nothing: the document is sandboxed.
  'content-security-policy': "default-src 'none'; sandbox",
  // The widget shows logos on customers' pages, which may isolate themselves (COEP).
  'cross-origin-resource-policy': 'cross-origin',
  // A replaced file gets a new id, so a URL's content never changes.
  'cache-control': 'public, max-age=31536000, immutable',
}

/** `/files/{id}`: uploaded files, outside the API prefix (not in the OpenAPI document). */
export const fileServingModule = (ctx: AppContext) =>
  new Elysia().get('/files/:file_id', async ({ params }) => {
    const file = await openFile(ctx, params.file_id)
    if (!file) throw notFound('File')
    return new Response(file.body, { headers: { ...SERVED_HEADERS, 'content-type': file.contentType } })
  }, { params: FileParams, detail: { hide: true } })
