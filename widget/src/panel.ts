// widget-panel.js: the feedback panel, loaded by widget.js on first open (budget 30 KiB gzipped). It
// renders into the loader's shadow root, so the host page's CSS cannot reach it.
import type { PanelApi, PanelContext, PanelMount, Session } from './types.ts'

interface Post { id: string; title: string; votes: number; status: string }
interface Board { slug: string; name: string }

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/

const CSS = `
.panel{--bg:#fff;--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--soft:#f3f4f6;--accent:#4f46e5;--on-accent:#fff;--danger:#b91c1c;--ok:#047857}
.panel.dark{--bg:#111827;--fg:#f9fafb;--muted:#9ca3af;--line:#374151;--soft:#1f2937;--accent:#818cf8;--on-accent:#111827;--danger:#fca5a5;--ok:#6ee7b7}
@media (prefers-color-scheme:dark){.panel.auto{--bg:#111827;--fg:#f9fafb;--muted:#9ca3af;--line:#374151;--soft:#1f2937;--accent:#818cf8;--on-accent:#111827;--danger:#fca5a5;--ok:#6ee7b7}}
.panel{all:initial;position:fixed;bottom:76px;right:20px;z-index:1;display:flex;flex-direction:column;width:min(380px,calc(100vw - 32px));max-height:min(620px,calc(100vh - 110px));box-sizing:border-box;background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:14px;box-shadow:0 12px 40px rgba(0,0,0,.28);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;overflow:hidden}
.panel.bottom-left{right:auto;left:20px}.panel.top-right{bottom:auto;top:76px}.panel.top-left{bottom:auto;top:76px;right:auto;left:20px}
.panel[hidden]{display:none}
:where(.panel) *{box-sizing:border-box;font:inherit;color:inherit;margin:0}
header{display:flex;align-items:center;justify-content:space-between;gap:8px;padding:14px 16px;border-bottom:1px solid var(--line)}
h2{font-size:17px;font-weight:700}
h3{font-size:12px;font-weight:700;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin-bottom:10px}
.body{overflow-y:auto;padding:12px 16px 16px}
button{cursor:pointer;border:0;background:none;border-radius:8px}
button:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.x{width:32px;height:32px;font-size:22px;line-height:1;color:var(--muted)}
.x:hover{background:var(--soft)}
ul{list-style:none;padding:0;margin:0 0 16px;display:flex;flex-direction:column;gap:8px}
li{display:flex;align-items:center;gap:12px;padding:8px;border:1px solid var(--line);border-radius:10px}
.vote{display:flex;flex-direction:column;align-items:center;min-width:46px;padding:4px 6px;border:1px solid var(--line);background:var(--soft);font-weight:700;font-size:13px;line-height:1.2}
.vote[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:var(--on-accent)}
.t{font-weight:600;overflow-wrap:anywhere}
.muted{color:var(--muted);font-size:12px}
form{display:flex;flex-direction:column;gap:10px;padding-top:14px;border-top:1px solid var(--line)}
label{display:flex;flex-direction:column;gap:4px;font-weight:600;font-size:13px}
label[hidden]{display:none}
input,textarea{width:100%;padding:8px 10px;border:1px solid var(--line);border-radius:8px;background:var(--bg);font-weight:400;font-size:14px}
textarea{resize:vertical;min-height:64px}
.primary{align-self:flex-start;padding:9px 18px;background:var(--accent);color:var(--on-accent);font-weight:700}
.primary[aria-busy=true]{opacity:.6}
.error{color:var(--danger);font-size:13px}
.note{color:var(--ok);font-size:13px}
.error:empty,.note:empty{display:none}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`

type Child = Node | string | false | null | undefined

function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, unknown> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false || value === null) continue
    if (name.startsWith('on')) (element as unknown as Record<string, unknown>)[name] = value
    else element.setAttribute(name, value === true ? '' : String(value))
  }
  element.append(...(children.filter(Boolean) as (Node | string)[]))
  return element
}

// randomUUID needs a secure context; host pages may be plain http.
const idempotencyKey = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`

const mount: PanelMount = (ctx: PanelContext): PanelApi => {
  const base = `${ctx.api}/public/${encodeURIComponent(ctx.workspace)}`
  let board: Board | undefined
  let session: Session | null = null
  let loading: Promise<void> | undefined
  let anonymousAllowed = true
  const voted = new Set<string>()

  async function call<T>(path: string, body?: Record<string, unknown>): Promise<T> {
    const headers: Record<string, string> = {}
    if (body) {
      headers['content-type'] = 'application/json'
      headers['idempotency-key'] = idempotencyKey()
      if (session) headers.authorization = `Bearer ${session.token}`
    }
    const response = await fetch(`${base}${path}`, { method: body ? 'POST' : 'GET', headers, body: body && JSON.stringify(body), credentials: 'omit' })
    const data = await response.json().catch(() => null)
    if (!response.ok) {
      const detail = Array.isArray(data?.detail) ? data.detail[0]?.msg : undefined
      throw new Error(response.status === 429 ? 'Too many requests; try again in a minute.' : detail ?? data?.message ?? `Request failed (${response.status})`)
    }
    return data as T
  }

  const heading = h('h2', { id: 'cw-title' }, 'Feedback')
  const close = h('button', { type: 'button', class: 'x', 'aria-label': 'Close', onclick: () => api.close() }, '×')
  const boardHeading = h('h3', { id: 'cw-posts' }, 'Ideas')
  const listState = h('p', { class: 'muted', role: 'status' }, 'Loading…')
  const list = h('ul', { 'aria-labelledby': 'cw-posts' })
  const field = (label: string, control: HTMLElement) => h('label', {}, label, control)
  const title = h('input', { name: 'title', required: true, maxlength: 200, autocomplete: 'off' })
  const details = h('textarea', { name: 'details', rows: 3, maxlength: 20000 })
  const email = h('input', { type: 'email', name: 'email', required: true, maxlength: 254, autocomplete: 'email' })
  const emailField = field('Email', email)
  const who = h('p', { class: 'muted' })
  const error = h('p', { class: 'error', role: 'alert' })
  const note = h('p', { class: 'note', role: 'status' })
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Submit')
  const form = h('form', { novalidate: true, 'aria-labelledby': 'cw-new', onsubmit: onSubmit },
    h('h3', { id: 'cw-new' }, 'Suggest an idea'), field('Title', title), field('Details', details), emailField, who, error, note, submit)
  const panel = h('div', { class: `panel ${ctx.theme} ${ctx.position}`, role: 'dialog', 'aria-labelledby': 'cw-title', hidden: true },
    h('header', {}, heading, close), h('div', { class: 'body' }, boardHeading, listState, list, form))
  panel.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return
    event.stopPropagation()
    api.close()
  })
  ctx.root.append(h('style', {}, CSS), panel)

  function postItem(post: Post) {
    const count = h('span', { id: `cw-n-${post.id}` }, String(post.votes), h('span', { class: 'sr' }, post.votes === 1 ? ' vote' : ' votes'))
    const button = h('button', {
      type: 'button', class: 'vote', 'aria-label': `Vote for ${post.title}`, 'aria-pressed': String(voted.has(post.id)), 'aria-describedby': count.id,
    }, h('span', { 'aria-hidden': 'true' }, '▲'), count)
    button.onclick = () => vote(post, button, count)
    return h('li', {}, button, h('div', {}, h('p', { class: 't' }, post.title), h('p', { class: 'muted' }, post.status)))
  }

  const render = (posts: Post[]) => {
    list.replaceChildren(...posts.map(postItem))
    listState.textContent = posts.length ? '' : 'No ideas yet. Be the first!'
  }

  async function load() {
    try {
      const info = await call<{ workspace: { name: string; settings: { allow_anonymous: boolean } }; boards: Board[] }>('')
      heading.textContent = info.workspace.name
      anonymousAllowed = info.workspace.settings.allow_anonymous
      api.refresh()
      board = ctx.board ? info.boards.find((candidate) => candidate.slug === ctx.board) : info.boards[0]
      if (!board) throw new Error('This board is not available.')
      boardHeading.textContent = board.name
      render((await call<{ items: Post[] }>(`/boards/${encodeURIComponent(board.slug)}/posts?sort=top&per_page=50`)).items)
    } catch (failure) {
      loading = undefined
      listState.textContent = `Could not load the ideas: ${(failure as Error).message}`
    }
  }

  /** Anonymous visitors name themselves with the Email field; null (and focus there) when it is not usable yet. */
  function author(purpose: string): Record<string, unknown> | null {
    if (session) return {}
    if (!anonymousAllowed) {
      error.textContent = `Sign in to ${purpose}.`
      return null
    }
    const value = email.value.trim()
    if (EMAIL.test(value)) return { email: value }
    error.textContent = `Enter your email address to ${purpose}.`
    email.focus()
    return null
  }

  async function vote(post: Post, button: HTMLButtonElement, count: HTMLElement) {
    error.textContent = note.textContent = ''
    const who = author('vote')
    if (!who || button.getAttribute('aria-busy')) return
    button.setAttribute('aria-busy', 'true')
    try {
      const result = await call<{ voted: boolean; votes: number }>(`/posts/${post.id}/votes`, who)
      post.votes = result.votes
      result.voted ? voted.add(post.id) : voted.delete(post.id)
      button.setAttribute('aria-pressed', String(result.voted))
      count.firstChild!.textContent = String(result.votes)
      note.textContent = result.voted ? `Voted for ${post.title}.` : `Vote removed from ${post.title}.`
    } catch (failure) {
      error.textContent = (failure as Error).message
    } finally {
      button.removeAttribute('aria-busy')
    }
  }

  async function onSubmit(event: Event) {
    event.preventDefault()
    error.textContent = note.textContent = ''
    const text = title.value.trim()
    if (!text) {
      error.textContent = 'Give your idea a title.'
      return title.focus()
    }
    const who = author('post')
    if (!who || !board || submit.getAttribute('aria-busy')) return
    submit.setAttribute('aria-busy', 'true')
    try {
      const post = await call<Post>(`/boards/${encodeURIComponent(board.slug)}/posts`, { title: text, body: details.value.trim() || undefined, ...who })
      title.value = details.value = ''
      list.prepend(postItem(post))
      listState.textContent = ''
      note.textContent = 'Thanks! Your idea was posted.'
      ctx.emit('post.created', post)
    } catch (failure) {
      error.textContent = (failure as Error).message
    } finally {
      submit.removeAttribute('aria-busy')
    }
  }

  const api: PanelApi = {
    open() {
      panel.hidden = false
      loading ??= load()
      api.refresh()
      close.focus()
    },
    close() {
      if (panel.hidden) return
      panel.hidden = true
      ctx.closed()
    },
    refresh() {
      void ctx.session().then((current) => {
        session = current
        emailField.hidden = Boolean(current) || !anonymousAllowed
        email.required = !emailField.hidden
        who.textContent = current ? `Posting as ${current.user.name ?? current.user.email ?? 'you'}` : anonymousAllowed ? '' : 'Sign in to post and vote.'
      })
    },
  }
  return api
}

;(window as unknown as { __chorusPanel: PanelMount }).__chorusPanel = mount
