// The contract between the loader (widget.js) and the lazily loaded panel (widget-panel.js). Types only.

export type Theme = 'light' | 'dark' | 'auto'

export interface EndUser {
  id: string
  external_id: string | null
  email: string | null
  name: string | null
  avatar_url: string | null
}

export interface Session {
  token: string
  user: EndUser
}

export interface PanelContext {
  root: ShadowRoot
  /** `{base}/api/v1` of the Chorus server the loader came from. */
  api: string
  workspace: string
  board: string | undefined
  /** `data-locale`, when the page set one; the panel falls back to the browser's languages. */
  locale: string | undefined
  theme: Theme
  /** `bottom-right` (default), `bottom-left`, `top-right` or `top-left`. */
  position: string
  /** The identified end user, once a pending identify() has settled; null for anonymous visitors. */
  session(): Promise<Session | null>
  emit(event: string, data?: unknown): void
  /** Called when the panel closed itself (Escape, its close button): the loader restores focus. */
  closed(): void
}

export interface PanelApi {
  open(): void
  close(): void
  /** The session changed (identify): re-render the form. */
  refresh(): void
}

export type PanelMount = (context: PanelContext) => PanelApi
