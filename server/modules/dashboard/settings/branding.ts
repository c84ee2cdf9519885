import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { ApiError, invalid } from '../../../errors.ts'
import { contrastRatio, HEX_COLOR, textOn } from '../../../lib/color.ts'
import { html } from '../../../lib/html.ts'
import { multipartBody } from '../../../lib/upload.ts'
import { roleAllows } from '../../../plugins/auth.ts'
import { UPLOAD_RULES, fileUrl } from '../../files/model.ts'
import { setWorkspaceImage } from '../../files/service.ts'
import { intakeAddress } from '../../inbound-email/addresses.ts'
import { rotateIntakeToken } from '../../inbound-email/service.ts'
import { portalPath } from '../../portal/links.ts'
import { updateWorkspace } from '../../workspaces/service.ts'
import type { WorkspaceViewer } from '../context.ts'
import { DASHBOARD } from '../pages.ts'
import { csrfField, formText, hidden, settingsPage, settingsPath, settingsRoutes, type Refusal } from './common.ts'

// Settings: branding and portal (issue 35, page 7). Logo and favicon through the upload service and
// its limits (POST /workspaces/{slug}/logo|favicon), brand colour and anonymous posting through
// updateWorkspace (PATCH /workspaces/{slug}), the intake address through rotateIntakeToken
// (POST …/email-intake/rotate-token). Members see the page read-only, without the intake address
// (the API shows `email_intake_token` to admins only).

const DEFAULT_BRAND = '#4338ca'
const ratio = (value: number) => `${value.toFixed(1)}:1`
const grade = (value: number) => (value >= 7 ? 'passes AAA' : value >= 4.5 ? 'passes AA' : value >= 3 ? 'large text only (AA large)' : 'fails: hard to read')

function contrastReport(color: string) {
  const onBrand = textOn(color)
  const onLight = contrastRatio(color, '#f8fafc')
  const onDark = contrastRatio(color, '#0b1120')
  return html`<ul id="contrast">
<li>${onBrand.color === '#ffffff' ? 'White' : 'Black'} text on the colour (buttons): ${ratio(onBrand.ratio)}, ${grade(onBrand.ratio)}</li>
<li>The colour on the light page background: ${ratio(onLight)}, ${grade(onLight)}</li>
<li>The colour on the dark page background: ${ratio(onDark)}, ${grade(onDark)}</li></ul>`
}

async function render(ctx: AppContext, viewer: WorkspaceViewer, refusal: Refusal) {
  const ws = viewer.workspace
  const base = settingsPath(ws.slug, 'branding')
  const admin = roleAllows(viewer.member.role, 'admin')
  const csrf = csrfField(viewer.csrf)
  const settings = ws.settings
  const brand = typeof settings.brand_color === 'string' && HEX_COLOR.test(settings.brand_color) ? settings.brand_color : null
  const shown = refusal.typed?.brand_color && HEX_COLOR.test(refusal.typed.brand_color) ? refusal.typed.brand_color : brand ?? DEFAULT_BRAND
  const logo = fileUrl(ctx.config.baseUrl, ws.logoFileId)
  const favicon = fileUrl(ctx.config.baseUrl, ws.faviconFileId)
  const portal = `${ctx.config.baseUrl}${portalPath(ws.slug)}`
  const widgetScript = `${ctx.config.baseUrl}/widget.js`
  const copy = (id: string, value: string, label: string) => html`<p><label for="${id}">${label}</label><input id="${id}" readonly value="${value}"> <button class="btn plain" type="button" data-copy="${id}">Copy</button></p>`
  const upload = (slot: 'logo' | 'favicon', current: string | null) => html`<section aria-labelledby="${slot}-h"><h3 id="${slot}-h">${slot === 'logo' ? 'Logo' : 'Favicon'}</h3>
${current ? html`<p><img src="${current}" alt="Current ${slot}" width="${slot === 'logo' ? 96 : 32}" height="${slot === 'logo' ? 96 : 32}"></p>` : html`<p class="muted">No ${slot} yet.</p>`}
${admin && html`<form method="post" action="${base}/${slot}" enctype="multipart/form-data">${csrf}
<p><label for="${slot}-file">${slot === 'logo' ? 'Logo' : 'Favicon'} file (${UPLOAD_RULES[slot].label}, at most ${UPLOAD_RULES[slot].maxBytes / 1024} KiB)</label><input id="${slot}-file" name="file" type="file" required accept="${UPLOAD_RULES[slot].types.join(',')}"${refusal.field === slot ? html` aria-invalid="true" aria-describedby="form-error"` : ''}></p>
<p><button class="btn" type="submit">Upload ${slot}</button></p></form>`}</section>`

  return settingsPage(viewer, 'Branding', refusal, html`<h1>Branding</h1>
${!admin && html`<p class="muted">Only admins change the branding; you see it read-only.</p>`}
<section aria-labelledby="images-h"><h2 id="images-h">Logo and favicon</h2>
<p>The portal, the widget panel and e-mails to end users show the logo; browsers show the favicon in the portal's tab.</p>
${upload('logo', logo)}${upload('favicon', favicon)}</section>
<section aria-labelledby="colour-h"><h2 id="colour-h">Brand colour</h2>
<p>Buttons and links of the portal and the widget, and e-mails to end users, use it. Current: ${brand ?? `the default (${DEFAULT_BRAND})`}.</p>
${contrastReport(shown)}
${admin && html`<form method="post" action="${base}/colour">${csrf}
<p><label for="brand-color">Brand colour</label><input id="brand-color" name="brand_color" type="color" value="${shown}"${refusal.field === 'brand_color' ? html` aria-invalid="true" aria-describedby="form-error"` : ''}></p>
<p><button class="btn" type="submit">Save colour</button></p></form>`}</section>
<section aria-labelledby="anon-h"><h2 id="anon-h">Anonymous posting</h2>
<p>${settings.allow_anonymous === false ? 'Off: visitors must be identified by your product (JWT) to post and vote.' : 'On: visitors may post and vote with just an e-mail address.'}</p>
${admin && html`<form method="post" action="${base}/anonymous">${csrf}
<p><label><input type="checkbox" name="allow_anonymous" value="true"${settings.allow_anonymous === false ? '' : html` checked`}> Allow anonymous posting and voting</label></p>
<p><button class="btn" type="submit">Save anonymous posting</button></p></form>`}</section>
<section aria-labelledby="links-h"><h2 id="links-h">Portal and widget</h2>
${copy('portal-link', portal, 'Public portal')}
<p><a href="${portalPath(ws.slug)}">Open the portal</a></p>
${copy('widget-link', widgetScript, 'Widget script')}</section>
${admin && html`<section aria-labelledby="intake-h"><h2 id="intake-h">Feedback by e-mail</h2>
<p>Mail to this address becomes a post on the default board.</p>
${copy('intake-address', intakeAddress(ws.emailIntakeToken, ctx.config.inboundEmailDomain), 'Inbound e-mail address')}
<form method="post" action="${base}/intake/rotate">${csrf}
<p><label><input type="checkbox" name="confirm" value="yes" required> Replace the address: mail to the current one is refused from now on</label></p>
<p><button class="btn" type="submit">Rotate address</button></p></form></section>`}
<p><a href="${DASHBOARD}/${ws.slug}">Back to the inbox</a></p>`)
}

export const brandingSettingsModule = (ctx: AppContext) => {
  const routes = settingsRoutes(ctx)
  const view = (viewer: WorkspaceViewer, refusal: Refusal) => render(ctx, viewer, refusal)
  const path = `${DASHBOARD}/:workspace_slug/settings/branding`
  const admin = { role: 'admin' as const, section: 'branding' as const, render: view }
  const image = (slot: 'logo' | 'favicon') => routes.action(admin, async (viewer, { body }) => {
    const file = body.file
    if (!(file instanceof File) || file.size === 0) throw invalid(['body', slot], `Choose a ${slot} file to upload.`)
    try {
      await setWorkspaceImage(ctx, viewer.workspace.id, slot, file)
    } catch (error) {
      // The upload service's own limits and words, with the field to mark.
      if (!(error instanceof ApiError)) throw error
      const refusal = new ApiError(error.code, `${error.message}.`)
      refusal.issues = [{ loc: ['body', slot], msg: `${error.message}.`, type: 'value_error' }]
      throw refusal
    }
    return `${slot === 'logo' ? 'Logo' : 'Favicon'} uploaded`
  })

  return new Elysia({ name: 'dashboard-settings-branding' })
    .get(path, routes.view('member', view), hidden)
    .post(`${path}/logo`, image('logo'), { parse: multipartBody(UPLOAD_RULES.logo.maxBytes), ...hidden })
    .post(`${path}/favicon`, image('favicon'), { parse: multipartBody(UPLOAD_RULES.favicon.maxBytes), ...hidden })
    .post(`${path}/colour`, routes.action({ ...admin, typed: (body) => ({ brand_color: formText(body.brand_color) }) }, async (viewer, { body }) => {
      const color = formText(body.brand_color).toLowerCase()
      if (!HEX_COLOR.test(color)) throw invalid(['body', 'brand_color'], 'Choose a colour like #4338ca.')
      await updateWorkspace(ctx.db, viewer.workspace, { settings: { brand_color: color } })
      return `Brand colour set to ${color}`
    }), { parse: 'urlencoded', ...hidden })
    .post(`${path}/anonymous`, routes.action(admin, async (viewer, { body }) => {
      const allow = formText(body.allow_anonymous) === 'true'
      await updateWorkspace(ctx.db, viewer.workspace, { settings: { allow_anonymous: allow } })
      return allow ? 'Anonymous posting is on' : 'Anonymous posting is off'
    }), { parse: 'urlencoded', ...hidden })
    .post(`${path}/intake/rotate`, routes.action(admin, async (viewer, { body }) => {
      if (formText(body.confirm) !== 'yes') throw invalid(['body', 'confirm'], 'Tick the box to confirm replacing the address.')
      await rotateIntakeToken(ctx.db, viewer.workspace.id)
      return 'New inbound address made; the old one no longer works'
    }), { parse: 'urlencoded', ...hidden })
}
