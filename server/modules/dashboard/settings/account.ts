import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { ApiError, forbidden, invalid } from '../../../errors.ts'
import { html } from '../../../lib/html.ts'
import { multipartBody } from '../../../lib/upload.ts'
import { enforceRateRules } from '../../../plugins/rate-limit.ts'
import { RESEND_LIMITS } from '../../auth/index.ts'
import { sendVerificationEmail } from '../../auth/service.ts'
import { eraseAccount } from '../../erasure/service.ts'
import { userSections } from '../../exports/sections.ts'
import { exportHeaders, exportStream } from '../../exports/service.ts'
import { fileUrl, UPLOAD_RULES } from '../../files/model.ts'
import { setAvatar } from '../../files/service.ts'
import { UserUpdate } from '../../user/model.ts'
import { updateProfile } from '../../user/service.ts'
import type { WorkspaceViewer } from '../context.ts'
import { DASHBOARD } from '../pages.ts'
import { checkedBody, csrfField, formText, hidden, invalidIf, settingsPage, settingsPath, settingsRoutes, type Refusal } from './common.ts'

// Settings: the signed-in person's account (issue 35, page 9), reached from any of their workspaces.
// The same services as /user/profile, /user/profile/avatar, /auth/resend-verification, /user/export and
// DELETE /user/account (its rules: no deletion from an impersonation session, 409 while the user owns a
// workspace shared with others).

export const accountSettingsModule = (ctx: AppContext) => {
  const routes = settingsRoutes(ctx)
  const path = `${DASHBOARD}/:workspace_slug/settings/account`

  async function render(viewer: WorkspaceViewer, refusal: Refusal) {
    const user = viewer.session.user
    const base = settingsPath(viewer.workspace.slug, 'account')
    const csrf = csrfField(viewer.csrf)
    const avatar = fileUrl(ctx.config.baseUrl, user.avatarFileId)
    return settingsPage(viewer, 'Account', refusal, html`<h1>Account</h1>
<section aria-labelledby="profile-h"><h2 id="profile-h">Profile</h2>
<form method="post" action="${base}/profile">${csrf}
<p><label for="profile-name">Your name</label><input id="profile-name" name="name" required maxlength="100" value="${refusal.typed?.name ?? user.name ?? ''}"${invalidIf(refusal, 'name')}></p>
<p><button class="btn" type="submit">Save profile</button></p></form>
<p>E-mail: ${user.email} (${user.emailVerified ? 'verified' : 'not verified yet'})</p>
${!user.emailVerified && html`<form method="post" action="${base}/verify">${csrf}<p><button class="btn plain" type="submit">Send the verification e-mail again</button></p></form>`}</section>
<section aria-labelledby="avatar-h"><h2 id="avatar-h">Avatar</h2>
${avatar ? html`<p><img src="${avatar}" alt="Your avatar" width="64" height="64"></p>` : html`<p class="muted">No avatar yet.</p>`}
<form method="post" action="${base}/avatar" enctype="multipart/form-data">${csrf}
<p><label for="avatar-file">Avatar image (${UPLOAD_RULES.avatar.label}, at most ${UPLOAD_RULES.avatar.maxBytes / 1024} KiB)</label><input id="avatar-file" name="file" type="file" required accept="${UPLOAD_RULES.avatar.types.join(',')}"${invalidIf(refusal, 'avatar')}></p>
<p><button class="btn" type="submit">Upload avatar</button></p></form>
${avatar && html`<form method="post" action="${base}/avatar/remove">${csrf}<p><button class="btn plain" type="submit">Remove avatar</button></p></form>`}</section>
<section aria-labelledby="mydata-h"><h2 id="mydata-h">Your data</h2>
<p><a class="btn" href="${base}/export" download>Download my data</a></p>
<h3>Delete your account</h3>
<p>Deletes your profile, sessions, votes and settings, and every workspace where you are the only member. Your posts and comments elsewhere stay, shown as by a deleted user. If you own a workspace others share, hand it over first.</p>
<form method="post" action="${base}/delete">${csrf}
<p><label for="confirm-email">Type your e-mail address, ${user.email}, to confirm</label><input id="confirm-email" name="confirm" type="email" required autocomplete="off"${invalidIf(refusal, 'confirm')}></p>
<p><button class="btn" type="submit">Delete my account</button></p></form></section>`)
  }

  const own = { role: 'member' as const, section: 'account' as const, render, gate: false }
  const avatarError = (error: unknown): never => {
    if (!(error instanceof ApiError)) throw error
    const refusal = new ApiError(error.code, `${error.message}.`)
    refusal.issues = [{ loc: ['body', 'avatar'], msg: `${error.message}.`, type: 'value_error' }]
    throw refusal
  }

  return new Elysia({ name: 'dashboard-settings-account' })
    .get(path, routes.view('member', render), hidden)
    .get(`${path}/export`, routes.view('member', async (viewer) =>
      new Response(exportStream(ctx, 'chorus-user-export', userSections(viewer.session.user.id)), { headers: exportHeaders('account') })), hidden)
    .post(`${path}/profile`, routes.action({ ...own, typed: (body) => ({ name: formText(body.name) }) }, async (viewer, { body }) => {
      const input = checkedBody<{ name: string }>(UserUpdate, { name: formText(body.name).trim() }, { name: 'Enter your name (1 to 100 characters).' })
      await updateProfile(ctx.db, viewer.session.user.id, input)
      return 'Profile saved'
    }), { parse: 'urlencoded', ...hidden })
    .post(`${path}/verify`, routes.action(own, async (viewer) => {
      const user = viewer.session.user
      if (user.emailVerified) return 'Your address is already verified'
      await enforceRateRules(ctx, {}, RESEND_LIMITS, { clientIp: '', body: null, user })
      await sendVerificationEmail(ctx, user)
      return `Verification e-mail sent to ${user.email}`
    }), { parse: 'urlencoded', ...hidden })
    .post(`${path}/avatar`, routes.action(own, async (viewer, { body }) => {
      if (!(body.file instanceof File) || body.file.size === 0) throw invalid(['body', 'avatar'], 'Choose an image to upload.')
      await setAvatar(ctx, viewer.session.user.id, body.file).catch(avatarError)
      return 'Avatar uploaded'
    }), { parse: multipartBody(UPLOAD_RULES.avatar.maxBytes), ...hidden })
    .post(`${path}/avatar/remove`, routes.action(own, async (viewer) => {
      await setAvatar(ctx, viewer.session.user.id, null)
      return 'Avatar removed'
    }), { parse: 'urlencoded', ...hidden })
    .post(`${path}/delete`, routes.action(own, async (viewer, { body }) => {
      if (viewer.session.impersonatorId) throw forbidden('An impersonation session cannot delete the account')
      if (formText(body.confirm).trim().toLowerCase() !== viewer.session.user.email.toLowerCase()) throw invalid(['body', 'confirm'], 'Type your e-mail address exactly to delete your account.')
      await eraseAccount(ctx, viewer.session.user.id)
      const cleared = ['access_token=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0', 'refresh_token=; Path=/api; HttpOnly; SameSite=Lax; Max-Age=0']
      const headers = new Headers({ location: '/signin', 'cache-control': 'no-store' })
      for (const cookie of cleared) headers.append('set-cookie', cookie)
      return new Response(null, { status: 303, headers })
    }), { parse: 'urlencoded', ...hidden })
}
