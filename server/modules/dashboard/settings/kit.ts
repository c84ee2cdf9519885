import { ApiError } from '../../../errors.ts'
import { htmlResponse } from '../../../lib/http-headers.ts'
import { html, type HtmlValue } from '../../../lib/html.ts'
import { dashboardHtml } from '../context.ts'
import { text, type Form } from '../guard.ts'
import { page, wsPath, type Shell } from '../pages.ts'
import { dashboardScript } from '../script.ts'
import type { WorkspaceViewer } from '../context.ts'

// What the settings pages share (issue 35): their paths, the secret shown once with its Copy button,
// the confirmation that names what a destructive form destroys, and rendering with the dashboard shell.

export const settingsPath = (slug: string, section: string) => `${wsPath(slug)}/settings/${section}`
export { csrfField as csrfInput, formRoute as urlencoded, hidden, messageOf, noticeOf } from '../guard.ts'

/** A secret in the one answer that shows it: selectable without script, a Copy button with it, and the warning. */
export const secretBox = (id: string, label: string, value: string, warning: string) => html`<div class="secret" role="region" aria-labelledby="${id}-label">
<p><label for="${id}" id="${id}-label">${label}</label><input id="${id}" class="secret-value" readonly value="${value}" spellcheck="false" autocomplete="off">
<button class="btn" type="button" data-copy="${id}" hidden>Copy</button></p>
<p class="alert" role="alert"><strong>Copy it now.</strong> ${warning}</p></div>`

/** The tick box every destructive form carries; its label says exactly what goes. */
export const confirmBox = (what: string) => html`<label><input type="checkbox" name="confirm" value="yes" required> ${what}</label>`
export function requireConfirmation(body: Form, what: string) {
  if (text(body.confirm) !== 'yes') throw new ApiError('VALIDATION_ERROR', `Tick the box to confirm: ${what}`)
}

/** The first message of an API error, as a form shows it. */
/** Errors a form shows on its page; a 404 or a stale form is its own page. */
export const isFormError = (error: unknown): error is ApiError => error instanceof ApiError && error.status !== 404 && error.code !== 'CSRF_REJECTED'

export interface Rendered { notice?: string; error?: string; status?: number }

export async function settingsPage(viewer: WorkspaceViewer, title: string, content: HtmlValue, rendered: Rendered = {}) {
  const shell: Shell = { title, slug: viewer.workspace.slug, csrf: viewer.csrf, notice: rendered.notice, error: rendered.error, script: (await dashboardScript()).path }
  return dashboardHtml(page(shell, content), rendered.status ?? 200)
}

/**
 * The widget page runs the real widget as its live preview; the widget styles its shadow root with a
 * <style> element, so this one page allows inline style (never inline script). Never stored either.
 */
export async function widgetPreviewPage(viewer: WorkspaceViewer, title: string, content: HtmlValue, rendered: Rendered = {}) {
  const shell: Shell = { title, slug: viewer.workspace.slug, csrf: viewer.csrf, notice: rendered.notice, error: rendered.error, script: (await dashboardScript()).path }
  return htmlResponse(page(shell, content).value, { scripts: ["'self'"], styles: ["'unsafe-inline'"] }, { status: rendered.status ?? 200, headers: { 'cache-control': 'no-store', vary: 'Cookie' } })
}

