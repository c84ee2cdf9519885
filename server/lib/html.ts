// The one way server-rendered pages put values into markup: `html\`...\`` escapes every interpolation
// unless it is itself `html` output, so user-provided text can never become markup by accident.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => ESCAPES[char]!)

/** Markup that is already safe: the output of `html`, or `trustedHtml` for markup a sanitizer produced. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString() {
    return this.value
  }
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[]

function render(value: HtmlValue): string {
  // null, undefined and booleans render nothing, so `${condition && html`...`}` reads naturally.
  if (value === null || value === undefined || typeof value === 'boolean') return ''
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new SafeHtml(out)
}

/** Markup from a sanitizer (rendered Markdown); never for text a person typed. */
export const trustedHtml = (markup: string) => new SafeHtml(markup)
