// Server-rendered pages of the authorization server: plain HTML forms, no script, so they work with
// JavaScript off and need no front-end build.

const escape = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#111}
h1{font-size:1.4rem}fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0}label{display:block;margin:.3rem 0}
.warn{color:#8a4b00;font-size:.9rem}.actions{display:flex;gap:.75rem}button{font:inherit;padding:.5rem 1.1rem;border-radius:6px;border:1px solid #555;background:#fff;cursor:pointer}
button[value=approve]{background:#1f4fd1;color:#fff;border-color:#1f4fd1}code{background:#f3f3f3;padding:0 .2rem}`

function layout(title: string, body: string) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escape(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`
}

/** Every page of this module forbids framing (clickjacking a consent button) and caching. */
export function htmlResponse(html: string, status = 200) {
  return new Response(html, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'",
    },
  })
}

/** A page with one heading and one paragraph (e.g. the answer to a one-click e-mail link). */
export const simplePage = (title: string, heading: string, text: string) => layout(title, `<h1>${escape(heading)}</h1><p>${escape(text)}</p>`)

export const errorPage = (message: string, status = 400) =>
  htmlResponse(layout('Cannot connect the app', `<h1>This app cannot be connected</h1><p>${escape(message)}</p><p>Go back to the app and try again.</p>`), status)

export interface ConsentView {
  requestId: string
  clientName: string
  verified: boolean
  redirectHost: string
  scopes: { scope: string; description: string }[]
  workspaces: { id: string; slug: string; name: string }[]
  csrf: string
  userEmail: string
}

export function consentPage(view: ConsentView) {
  const name = escape(view.clientName)
  const workspaces = view.workspaces.length
    ? view.workspaces.map((ws, index) => `<label><input type="radio" name="workspace_id" value="${escape(ws.id)}"${index === 0 ? ' checked' : ''} required> ${escape(ws.name)} <code>${escape(ws.slug)}</code></label>`).join('\n')
    : '<p>You are not an admin or owner of any workspace, so you cannot connect an app.</p>'
  const scopes = view.scopes.map(({ scope, description }) =>
    `<label><input type="checkbox" name="scope" value="${escape(scope)}" checked> ${escape(description)} <code>${escape(scope)}</code></label>`).join('\n')
  return htmlResponse(layout(`Connect ${view.clientName}`, `
<h1>Connect <strong>${name}</strong> to Chorus?</h1>
${view.verified ? '' : `<p class="warn">Unverified app: “${name}” is the name the app gave itself. Chorus has not checked who made it.</p>`}
<p>After you decide, you will be sent to <strong>${escape(view.redirectHost)}</strong>. Signed in as ${escape(view.userEmail)}.</p>
<form method="post" action="/oauth/consent/${escape(view.requestId)}">
<input type="hidden" name="csrf" value="${escape(view.csrf)}">
<fieldset><legend>Workspace</legend>
${workspaces}
</fieldset>
<fieldset><legend>${name} will be able to</legend>
${scopes}
</fieldset>
<div class="actions">
${view.workspaces.length ? '<button type="submit" name="decision" value="approve">Allow</button>' : ''}
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>`))
}
