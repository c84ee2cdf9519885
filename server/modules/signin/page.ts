// Server-rendered HTML of the built-in sign-in pages: no script, one small stylesheet, plain forms.

const escape = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

export const STYLE = `
body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1f2937;background:#f3f4f6}
main{max-width:26rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px #0002}
h1{font-size:1.5rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
input[type=email],input[type=text]{box-sizing:border-box;width:100%;padding:.5rem;font:inherit;border:1px solid #6b7280;border-radius:.25rem}
button,.button{display:block;box-sizing:border-box;width:100%;margin-top:1rem;padding:.6rem;font:inherit;font-weight:600;text-align:center;border-radius:.25rem;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;text-decoration:none;cursor:pointer}
.button{background:#fff;color:#1d4ed8}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.alert{padding:.75rem;border-radius:.25rem;background:#fee2e2;color:#7f1d1d}
.notice{padding:.75rem;border-radius:.25rem;background:#dcfce7;color:#14532d}
.or{margin:1.5rem 0 0;text-align:center;color:#4b5563}`

/** Messages for the `error` the identity-provider callback and the forms send here. */
const ERRORS: Record<string, string> = {
  access_denied: 'Sign-in was cancelled at your identity provider.',
  email_unverified: 'Your identity provider has not verified your e-mail address, so it cannot sign you in here. Use an e-mail link instead.',
  email_missing: 'Your identity provider did not share your e-mail address.',
  idp_unavailable: 'Your identity provider could not be reached. Try again in a moment.',
  expired: 'The sign-in took too long. Please start again.',
  invalid_email: 'Enter a valid e-mail address.',
  invalid_form: 'The form expired. Please try again.',
  invalid_link: 'This sign-in link is invalid, expired or already used. Ask for a new one.',
  invalid_invitation: 'This invitation link is invalid, expired or already used. Ask the workspace admin for a new one.',
  invalid_name: 'Enter your name (at most 100 characters).',
  rate_limited: 'Too many attempts. Wait a few minutes and try again.',
  email_refused: 'The mail server for this address refused the e-mail. Check the address, or use another one.',
  mail_refused: 'The e-mail could not be sent: our mail server refused it. Try again later or use another sign-in method.',
  mail_unavailable: 'The e-mail could not be sent just now. Try again in a minute.',
}
const errorText = (code: string) => ERRORS[code] ?? 'Sign-in did not complete. Please try again.'

function layout(title: string, body: string) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escape(title)} · Chorus</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`
}

export interface SignInPage {
  csrf: string
  returnTo: string
  error?: string
  sent?: boolean
  email?: string
  /** Links that start the identity-provider login, one per configured region. */
  providers: { region: string; href: string }[]
}

export function signInPage(page: SignInPage) {
  const alert = page.error ? `<p class="alert" role="alert">${escape(errorText(page.error))}</p>` : ''
  const notice = page.sent ? '<p class="notice" role="status">Check your inbox: we sent you a sign-in link. It works once, for 15 minutes.</p>' : ''
  const providers = page.providers.length
    ? `<p class="or">or</p>${page.providers.map(({ region, href }) => `<a class="button" href="${escape(href)}">Sign in with your identity provider${page.providers.length > 1 ? ` (${escape(region)})` : ''}</a>`).join('')}`
    : ''
  return layout('Sign in', `<h1>Sign in to Chorus</h1>${alert}${notice}
<form method="post" action="/signin">
<input type="hidden" name="csrf" value="${escape(page.csrf)}">
<input type="hidden" name="return_to" value="${escape(page.returnTo)}">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${escape(page.email ?? '')}">
<button type="submit">E-mail me a sign-in link</button>
</form>${providers}`)
}

/** The e-mailed link lands here; a button (not the GET itself) uses the token, so link scanners cannot spend it. */
export function magicLinkPage(csrf: string, token: string, error?: string) {
  if (error) return layout('Sign in', `<h1>Sign in to Chorus</h1><p class="alert" role="alert">${escape(errorText(error))}</p><a class="button" href="/signin">Back to sign-in</a>`)
  return layout('Sign in', `<h1>Sign in to Chorus</h1><p>Continue to finish signing in on this device.</p>
<form method="post" action="/auth/magic-link">
<input type="hidden" name="csrf" value="${escape(csrf)}">
<input type="hidden" name="token" value="${escape(token)}">
<button type="submit">Continue</button>
</form>`)
}

/** Where an e-mailed invitation lands (`{DASHBOARD_URL}/accept-invite?token=…&workspace=…`): the invitee names themselves and joins. */
export function acceptInvitePage(page: { csrf: string; token: string; workspace: string; name?: string; error?: string }) {
  if (page.error === 'invalid_invitation') return layout('Join a workspace', `<h1>Join a workspace</h1><p class="alert" role="alert">${escape(errorText(page.error))}</p><a class="button" href="/signin">Sign in</a>`)
  return layout('Join a workspace', `<h1>Join ${escape(page.workspace || 'the workspace')} on Chorus</h1>
${page.error ? `<p class="alert" role="alert" id="invite-error">${escape(errorText(page.error))}</p>` : '<p>You were invited by e-mail. Tell the team your name to join.</p>'}
<form method="post" action="/accept-invite">
<input type="hidden" name="csrf" value="${escape(page.csrf)}">
<input type="hidden" name="token" value="${escape(page.token)}">
<input type="hidden" name="workspace" value="${escape(page.workspace)}">
<label for="name">Your name</label>
<input id="name" name="name" type="text" autocomplete="name" maxlength="100" required value="${escape(page.name ?? '')}"${page.error ? ' aria-invalid="true" aria-describedby="invite-error"' : ''}>
<button type="submit">Accept</button>
</form>`)
}
