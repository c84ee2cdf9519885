import { html } from '../../../lib/html.ts'
import type { JwtConfig } from '../../jwt-config/service.ts'
import { confirmBox, csrfInput, secretBox, settingsPath } from './kit.ts'
import { identifySamples } from './identify-samples.ts'

// The Widget page: the snippet with its options, the real widget as live preview, identify's JWT setup
// with the signing code in five languages, and the "check a token" box.

export const WIDGET_OPTIONS = {
  theme: ['auto', 'light', 'dark'],
  position: ['bottom-right', 'bottom-left', 'top-right', 'top-left'],
  locale: ['', 'en', 'de', 'fr', 'es', 'ja', 'ar', 'he'],
} as const
export type WidgetOptions = { theme: string; position: string; locale: string; board: string }

export interface WidgetView {
  slug: string
  csrf: string
  baseUrl: string
  admin: boolean
  boards: { slug: string; name: string }[]
  options: WidgetOptions
  config: JwtConfig | null
  secret?: { value: string; overlapUntil?: Date | null }
  check?: { accepted: boolean; reason: string | null; claims: Record<string, unknown> | null }
}

/** The one-line embed, with only the options that differ from the defaults. */
export function snippetOf(baseUrl: string, slug: string, o: WidgetOptions) {
  const attributes = [['workspace', slug], ['board', o.board], ['theme', o.theme === 'auto' ? '' : o.theme], ['position', o.position === 'bottom-right' ? '' : o.position], ['locale', o.locale]]
    .filter(([, value]) => value).map(([name, value]) => ` data-${name}="${value}"`).join('')
  return `<script src="${baseUrl}/widget.js"${attributes} async></script>`
}

const select = (id: string, name: string, label: string, values: readonly string[], current: string, words: (v: string) => string = (v) => v) =>
  html`<p><label for="${id}">${label}</label><select id="${id}" name="${name}">${values.map((v) => html`<option value="${v}"${v === current ? html` selected` : ''}>${words(v)}</option>`)}</select></p>`

export function widgetView(view: WidgetView) {
  const base = settingsPath(view.slug, 'widget')
  const o = view.options
  const snippet = snippetOf(view.baseUrl, view.slug, o)
  const identify = `<script>\n  window.Chorus = window.Chorus || { q: [] }\n  Chorus.q.push(['identify', 'TOKEN_YOUR_SERVER_SIGNED'])\n</script>`
  const config = view.config
  const samples = identifySamples({ algorithm: config?.algorithm ?? 'HS256', issuer: config?.issuer ?? null, audience: config?.audience ?? null })
  return html`<h1>Widget</h1>
<h2>Install</h2>
<p>Paste this line before <code>&lt;/body&gt;</code> on every page where the Feedback button should appear:</p>
<pre><code id="snippet">${snippet}</code></pre>
<p><button class="btn" type="button" data-copy="snippet" hidden>Copy</button></p>
<form method="get" action="${base}" class="filters"><fieldset><legend>Options (data-* attributes)</legend>
${select('w-theme', 'theme', 'Theme (data-theme)', WIDGET_OPTIONS.theme, o.theme, (v) => (v === 'auto' ? 'Follow the visitor (auto)' : v))}
${select('w-position', 'position', 'Position (data-position)', WIDGET_OPTIONS.position, o.position)}
${select('w-locale', 'locale', 'Language (data-locale)', WIDGET_OPTIONS.locale, o.locale, (v) => v || "The visitor's browser language")}
${select('w-board', 'board', 'Board for new posts (data-board)', ['', ...view.boards.map((b) => b.slug)], o.board, (v) => (v ? view.boards.find((b) => b.slug === v)!.name : 'The default board'))}
<p><button class="btn" type="submit">Update snippet and preview</button></p></fieldset></form>
<h2>Live preview</h2>
<p>The Feedback button in the corner of this page is the widget itself with these options and your brand colour (set it under Branding). Open it to try it; what you post here is real.</p>
<script src="/widget.js" data-workspace="${view.slug}"${o.board ? html` data-board="${o.board}"` : ''} data-theme="${o.theme}" data-position="${o.position}"${o.locale ? html` data-locale="${o.locale}"` : ''} async></script>
<h2>Identify your users</h2>
<p>Signed-in users of your product post as themselves (verified) when your server signs a short-lived token and the page hands it to the widget:</p>
<pre><code id="identify-snippet">${identify}</code></pre>
${view.admin ? jwtSetup(view, base) : html`<p>Admins set up the signing key.</p>`}
<h3>Sign the token on your server</h3>
${samples.map((s) => html`<h4 id="sample-${s.id}-h">${s.language}</h4><pre aria-labelledby="sample-${s.id}-h"><code id="sample-${s.id}">${s.code}</code></pre><p><button class="btn plain" type="button" data-copy="sample-${s.id}" hidden aria-label="Copy the ${s.language} code">Copy</button></p>`)}
${view.admin && config ? checkBox(view, base) : ''}`
}

function jwtSetup(view: WidgetView, base: string) {
  const config = view.config
  const secret = view.secret
    ? secretBox('jwt-secret', 'Signing secret (HS256)', view.secret.value, view.secret.overlapUntil
      ? `The previous secret keeps verifying until ${view.secret.overlapUntil.toISOString().slice(0, 16).replace('T', ' ')} UTC. This is the only time the new one is shown.`
      : 'This is the only time it is shown. Put it in your server\'s environment as CHORUS_JWT_SECRET.')
    : ''
  if (!config) {
    return html`${secret}<h3>Signing key</h3><form method="post" action="${base}/jwt">${csrfInput(view.csrf)}
<p><label for="jwt-algorithm">Algorithm</label><select id="jwt-algorithm" name="algorithm"><option value="HS256">HS256: a shared secret Chorus generates</option><option value="RS256">RS256: your RSA public key</option><option value="ES256">ES256: your P-256 public key</option><option value="EdDSA">EdDSA: your Ed25519 public key</option></select></p>
<p><label for="jwt-key">Public key (PEM), for RS256, ES256 or EdDSA</label><textarea id="jwt-key" name="public_key" rows="4"></textarea></p>
<p><label for="jwt-jwks">Or a JWKS URL (https)</label><input id="jwt-jwks" name="jwks_url" type="url" maxlength="2048"></p>
<p><label for="jwt-iss">Issuer (iss), optional</label><input id="jwt-iss" name="issuer" maxlength="255"></p>
<p><label for="jwt-aud">Audience (aud), optional</label><input id="jwt-aud" name="audience" maxlength="255"></p>
<p><button class="btn" type="submit">Set up identify</button></p></form>`
  }
  const source = config.algorithm === 'HS256' ? 'a secret Chorus generated (shown once)' : config.jwksUrl ? html`the JWKS at <code>${config.jwksUrl}</code>` : 'the public key you gave'
  const overlap = config.previousSecretExpiresAt && config.previousSecretExpiresAt > new Date() ? html` The previous secret still verifies until ${config.previousSecretExpiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC.` : ''
  return html`${secret}<h3>Signing key</h3>
<p>Tokens are verified with ${config.algorithm} and ${source}.${config.issuer ? html` Issuer must be <code>${config.issuer}</code>.` : ''}${config.audience ? html` Audience must be <code>${config.audience}</code>.` : ''}${overlap}</p>
${config.algorithm === 'HS256' ? html`<form method="post" action="${base}/jwt/rotate">${csrfInput(view.csrf)}
<p><label for="jwt-overlap">The old secret keeps working</label><select id="jwt-overlap" name="overlap"><option value="86400">for 24 hours (switch without downtime)</option><option value="0">not at all (it leaked)</option></select></p>
<p>${confirmBox('Yes, replace the signing secret; tokens signed with the old one stop being accepted when the overlap ends')}</p>
<p><button class="btn" type="submit">Rotate secret</button></p></form>` : ''}`
}

function checkBox(view: WidgetView, base: string) {
  const check = view.check
  return html`<h3 id="check-h">Check a token</h3>
<form method="post" action="${base}/check">${csrfInput(view.csrf)}
<p><label for="check-token">Token (as your server signed it)</label><textarea id="check-token" name="token" rows="3" maxlength="16384" spellcheck="false"></textarea></p>
<p><button class="btn" type="submit">Check token</button></p></form>
${check ? (check.accepted
    ? html`<div class="notice" role="status" id="check-result"><p><strong>Accepted.</strong> Identify would sign in <code>${String(check.claims?.sub)}</code>.</p><pre>${JSON.stringify(check.claims, null, 2)}</pre></div>`
    : html`<div class="alert" role="alert" id="check-result"><p><strong>Refused:</strong> ${check.reason}</p></div>`) : ''}`
}
