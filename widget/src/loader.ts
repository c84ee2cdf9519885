// widget.js: the embed loader. Budget 3 KiB gzipped, no dependencies. It adds one fixed-position
// launcher inside a shadow root (no layout shift, no host CSS), exposes window.Chorus, and loads the
// panel only on first open.
import type { PanelApi, PanelContext, PanelMount, Session, Theme } from './types.ts'

declare const __PANEL_VERSION__: string

type Handler = (data?: unknown) => void

interface ChorusApi {
  version: string
  open(): Promise<void>
  close(): void
  identify(token: string): Promise<Session['user']>
  on(event: string, handler: Handler): ChorusApi
}

const win = window as unknown as { Chorus?: ChorusApi | { q?: unknown[][] }; __chorusPanel?: PanelMount }

// The launcher's name in the panel's languages; the panel carries the rest of the words.
const LABEL: Record<string, string> = { fr: 'Avis', es: 'Comentarios', ja: 'フィードバック', ar: 'ملاحظات', he: 'משוב' }

const EDGE: Record<string, string> = {
  'bottom-left': 'bottom:20px;left:20px',
  'top-right': 'top:20px;right:20px',
  'top-left': 'top:20px;left:20px',
}

function start(script: HTMLScriptElement) {
  const data = script.dataset
  const workspace = data.workspace
  if (!workspace) return console.warn('Chorus: the script tag needs data-workspace')
  const base = new URL('.', script.src).href
  const api = `${base}api/v1`
  const theme = (['light', 'dark'].includes(data.theme!) ? data.theme : 'auto') as Theme
  const position = EDGE[data.position!] ? data.position! : 'bottom-right'
  const lang = [data.locale, ...navigator.languages].map((tag) => tag?.toLowerCase().split(/[-_]/)[0]).find((tag) => tag && (LABEL[tag] || tag === 'en' || tag === 'de'))
  const listeners: Record<string, Handler[]> = {}
  const queued = (win.Chorus as { q?: unknown[][] } | undefined)?.q
  let session: Promise<Session | null> = Promise.resolve(null)
  let panel: Promise<PanelApi> | undefined
  let ready = false

  const emit = (event: string, payload?: unknown) => {
    for (const handler of listeners[event] ?? []) {
      try {
        handler(payload)
      } catch (error) {
        console.error(error)
      }
    }
  }

  const host = document.createElement('div')
  host.setAttribute('data-chorus', '')
  // A zero-size fixed box: it takes no room in the page, and inline !important beats host rules.
  host.style.cssText = 'all:initial!important;position:fixed!important;top:0!important;left:0!important;width:0!important;height:0!important;z-index:2147483000!important'
  const root = host.attachShadow({ mode: 'open' })
  root.innerHTML = `<style>:host{all:initial!important}.l{all:initial;position:fixed;${EDGE[position] ?? 'bottom:20px;right:20px'};box-sizing:border-box;font:600 15px/1 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;padding:12px 20px;border-radius:999px;background:var(--chorus-accent,#4f46e5);color:var(--chorus-on-accent,#fff);box-shadow:0 4px 14px rgba(0,0,0,.25);cursor:pointer}.l:hover{filter:brightness(.9)}.l:focus-visible{outline:3px solid #a5b4fc;outline-offset:2px}</style><button class="l" type="button" aria-haspopup="dialog" aria-expanded="false" lang="${lang ?? 'en'}" dir="${lang === 'ar' || lang === 'he' ? 'rtl' : 'ltr'}">${LABEL[lang!] ?? 'Feedback'}</button>`
  const launcher = root.querySelector('button')!

  const context: PanelContext = {
    root, api, workspace, board: data.board, locale: data.locale, theme, position, emit,
    session: () => session,
    closed() {
      launcher.setAttribute('aria-expanded', 'false')
      launcher.focus()
      emit('close')
    },
  }

  const load = () => (panel ??= new Promise<PanelApi>((resolve, reject) => {
    const tag = document.createElement('script')
    tag.src = `${base}widget-panel.js?v=${__PANEL_VERSION__}`
    tag.async = true
    tag.onload = () => (win.__chorusPanel ? resolve(win.__chorusPanel(context)) : reject(new Error('Chorus: the panel did not start')))
    tag.onerror = () => {
      panel = undefined
      reject(new Error('Chorus: the panel could not be loaded'))
    }
    document.head.appendChild(tag)
  }))

  const chorus: ChorusApi = {
    version: __PANEL_VERSION__,
    async open() {
      if (launcher.getAttribute('aria-expanded') === 'true') return
      launcher.setAttribute('aria-expanded', 'true')
      try {
        ;(await load()).open()
      } catch (error) {
        launcher.setAttribute('aria-expanded', 'false')
        throw error
      }
      emit('open')
    },
    close() {
      void panel?.then((opened) => opened.close())
    },
    identify(token) {
      const identified = fetch(`${api}/workspaces/${encodeURIComponent(workspace)}/identify`, {
        method: 'POST',
        credentials: 'omit',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      }).then(async (response) => {
        const body = await response.json()
        if (!response.ok) throw new Error(`Chorus identify: ${body.message}`)
        return { token: body.session_token as string, user: body }
      })
      // A failed identify leaves the visitor anonymous; the caller still sees the rejection.
      session = identified.catch(() => null)
      void panel?.then((opened) => opened.refresh())
      return identified.then((value) => value.user)
    },
    on(event, handler) {
      ;(listeners[event] ??= []).push(handler)
      if (event === 'ready' && ready) handler()
      return chorus
    },
  }

  launcher.onclick = () => (launcher.getAttribute('aria-expanded') === 'true' ? chorus.close() : chorus.open())
  win.Chorus = chorus
  for (const [method, ...args] of queued ?? []) (chorus as unknown as Record<string, (...a: unknown[]) => unknown>)[method as string]?.(...args)

  const mount = () => {
    document.body.appendChild(host)
    ready = true
    emit('ready')
    dispatchEvent(new CustomEvent('chorus:ready'))
  }
  document.body ? mount() : addEventListener('DOMContentLoaded', mount)
}

const current = document.currentScript as HTMLScriptElement | null
if (!(win.Chorus as ChorusApi | undefined)?.version) start(current ?? document.querySelector<HTMLScriptElement>('script[data-workspace]')!)
