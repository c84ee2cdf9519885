// The panel's side of the public API (`/api/v1/public/{workspace}`): the shapes it reads, requests with
// the visitor's bearer token, and the anonymous visitor's session kept on the host page.
import type { Session } from './types.ts'

export interface Post { id: string; title: string; body?: string | null; votes: number; status: string; voted?: boolean; verified?: boolean; comment_count?: number; moderation?: 'held' | null }
export interface Board { slug: string; name: string }
export interface Comment { id: string; body: string; author: { name: string; type?: string }; created_at: string }
export interface Entry { id: string; title: string; body_html: string; published_at: string; posts?: { id: string; title: string }[] }
export interface Page<T> { items: T[]; page: number; total_pages: number }
export interface Workspace {
  workspace: { name: string; logo_url: string | null; default_board?: string | null; accent_color?: string | null; allow_anonymous?: boolean; settings?: { allow_anonymous?: boolean; brand_color?: string | null; default_board?: string | null; proof_of_work?: boolean } }
  boards: Board[]
}
/** An anonymous visitor's session from an e-mail write or a claim, kept per workspace on the host page. */
export interface Visitor { token: string; expires?: string; email: string; verified?: boolean; claim?: string; claimExpires?: string }

export class HttpError extends Error {
  constructor(message: string, readonly status: number) { super(message) }
}

// randomUUID needs a secure context; host pages may be plain http.
const idempotencyKey = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`

export interface PublicApiOptions {
  /** `{base}/api/v1` of the Chorus server. */
  api: string
  workspace: string
  /** The identified end user's or the remembered visitor's token, if any. */
  bearer(): string | undefined
  /** Messages for failures: 429, and a status without a message of its own. */
  tooMany: string
  requestFailed(status: number): string
}

export function publicApi(options: PublicApiOptions) {
  const base = `${options.api}/public/${encodeURIComponent(options.workspace)}`
  async function request<T>(path: string, body?: Record<string, unknown>): Promise<{ data: T; response: Response }> {
    const headers: Record<string, string> = {}
    const token = options.bearer()
    if (token) headers.authorization = `Bearer ${token}`
    if (body) {
      headers['content-type'] = 'application/json'
      headers['idempotency-key'] = idempotencyKey()
    }
    // no-cache: public reads are cacheable, but the visitor's own votes must be current after a reload.
    const response = await fetch(`${base}${path}`, { method: body ? 'POST' : 'GET', headers, body: body && JSON.stringify(body), credentials: 'omit', cache: 'no-cache' })
    const data = await response.json().catch(() => null)
    if (!response.ok) {
      const detail = Array.isArray(data?.detail) ? data.detail[0]?.msg : undefined
      throw new HttpError(response.status === 429 ? options.tooMany : detail ?? data?.message ?? options.requestFailed(response.status), response.status)
    }
    return { data: data as T, response }
  }
  return { request, get: async <T>(path: string) => (await request<T>(path)).data }
}

/** The remembered visitor of one workspace in localStorage; without storage (private mode, sandboxed frames) it lasts for the page. */
export function visitorStore(workspace: string) {
  const key = `chorus.visitor.${workspace}`
  return {
    recall(): Visitor | null {
      try {
        const stored = JSON.parse(localStorage.getItem(key) ?? 'null') as Visitor | null
        return stored?.token && !(stored.expires && Date.parse(stored.expires) < Date.now()) ? stored : null
      } catch {
        return null
      }
    },
    keep(next: Visitor | null) {
      try {
        next ? localStorage.setItem(key, JSON.stringify(next)) : localStorage.removeItem(key)
      } catch {
        // Storage may be off: the session lasts for this page.
      }
    },
  }
}
