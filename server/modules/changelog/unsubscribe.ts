// The page behind the unsubscribe link of changelog mail: plain HTML, no script.
import type { Db } from '../../db/client.ts'
import { ApiError } from '../../errors.ts'
import { escapeHtml as escape } from '../../lib/mail.ts'
import { htmlResponse } from '../oauth/page.ts'
import { findSubscription, unsubscribe } from './mail.ts'

/** A plain page of the unsubscribe flows (changelog and post updates). */
export function unsubscribeHtml(title: string, body: string, status = 200) {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><title>${escape(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1.1rem;border-radius:6px;border:1px solid #555;background:#fff;cursor:pointer}button:focus-visible{outline:3px solid #1f4fd1}@media (prefers-color-scheme:dark){body{background:#111;color:#eee}button{background:#222;color:#eee}}</style>
</head><body><main><h1>${escape(title)}</h1>${body}</main></body></html>`
  return htmlResponse(html, status)
}

/** GET (`confirm` false) shows a button; POST unsubscribes. An unknown token gets an HTML 404. */
export async function unsubscribePage(db: Db, workspaceSlug: string, token: string, confirm: boolean) {
  try {
    if (confirm) {
      const row = await unsubscribe(db, workspaceSlug, token)
      return unsubscribeHtml('You are unsubscribed', `<p>You will get no more changelog e-mail from ${escape(row.workspaceName)}.</p>`)
    }
    const row = await findSubscription(db, workspaceSlug, token)
    const done = row.subscription.unsubscribedAt !== null
    return unsubscribeHtml(done ? 'You are unsubscribed' : 'Unsubscribe from changelog e-mail', done
      ? `<p>You already get no changelog e-mail from ${escape(row.workspaceName)}.</p>`
      : `<p>Stop e-mail about ${escape(row.workspaceName)}'s changelog?</p><form method="post"><button type="submit">Unsubscribe</button></form>`)
  } catch (error) {
    if (error instanceof ApiError && error.code === 'NOT_FOUND') return unsubscribeHtml('Link not valid', '<p>This unsubscribe link is not valid. It may belong to another workspace or be mistyped.</p>', 404)
    throw error
  }
}
