// widget-panel.js: the feedback panel, loaded by widget.js on first open (budget 30 KiB gzipped). It
// renders into the loader's shadow root, so the host page's CSS cannot reach it.
import { pickLocale, translator, type Words } from './i18n.ts'
import type { PanelApi, PanelContext, PanelMount, Session } from './types.ts'

interface Post { id: string; title: string; body?: string | null; votes: number; status: string; voted?: boolean; verified?: boolean; comment_count?: number }
interface Board { slug: string; name: string }
interface Comment { id: string; body: string; author: { name: string }; created_at: string }
interface Entry { id: string; title: string; body_html: string; published_at: string; posts?: { id: string; title: string }[] }
interface Page<T> { items: T[]; page: number; total_pages: number }
interface Workspace {
  workspace: { name: string; logo_url: string | null; default_board?: string | null; accent_color?: string | null; allow_anonymous?: boolean; settings?: { allow_anonymous?: boolean; brand_color?: string | null; default_board?: string | null } }
  boards: Board[]
}
/** An anonymous visitor's session from an e-mail write or a claim, kept per workspace on the host page. */
interface Visitor { token: string; expires?: string; email: string; verified?: boolean }

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/
const PER_PAGE = 50

const DARK = '--bg:#111827;--fg:#f9fafb;--muted:#9ca3af;--line:#4b5563;--soft:#1f2937;--accent:#818cf8;--on-accent:#111827;--danger:#fca5a5;--ok:#6ee7b7'
const CSS = `
.panel{--bg:#fff;--fg:#111827;--muted:#4b5563;--line:#d1d5db;--soft:#f3f4f6;--accent:#4f46e5;--on-accent:#fff;--danger:#b91c1c;--ok:#047857}
.panel.dark{${DARK}}
@media (prefers-color-scheme:dark){.panel.auto{${DARK}}}
.panel{all:initial;position:fixed;bottom:76px;right:20px;z-index:1;display:flex;flex-direction:column;width:min(400px,calc(100vw - 32px));height:min(640px,calc(100vh - 110px));box-sizing:border-box;background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:14px;box-shadow:0 12px 40px rgba(0,0,0,.28);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;overflow:hidden}
.panel.bottom-left{right:auto;left:20px}.panel.top-right{bottom:auto;top:76px}.panel.top-left{bottom:auto;top:76px;right:auto;left:20px}
.panel[hidden],[hidden]{display:none!important}
:where(.panel) *{box-sizing:border-box;font:inherit;color:inherit;margin:0}
header{display:flex;align-items:center;justify-content:space-between;gap:8px;padding:12px 16px 0}
h2{font-size:17px;font-weight:700}
.brand{display:flex;align-items:center;gap:10px;min-width:0}
.logo{width:28px;height:28px;object-fit:contain;border-radius:6px}
h3{font-size:12px;font-weight:700;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin-bottom:10px}
h4{font-size:15px;font-weight:700}
[role=tablist]{display:flex;gap:4px;padding:8px 12px 0;border-bottom:1px solid var(--line)}
[role=tab]{padding:8px 10px;border-bottom:3px solid transparent;border-radius:6px 6px 0 0;font-weight:600;color:var(--muted)}
[role=tab][aria-selected=true]{border-color:var(--accent);color:var(--fg)}
.body{flex:1;overflow-y:auto;padding:12px 16px 16px}
.view{display:flex;flex-direction:column}
button{cursor:pointer;border:0;background:none;border-radius:8px;text-align:start}
button:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.x{width:32px;height:32px;font-size:22px;line-height:1;color:var(--muted);text-align:center}
.x:hover,[role=tab]:hover{background:var(--soft)}
ul{list-style:none;padding:0;margin:0 0 12px;display:flex;flex-direction:column;gap:8px}
li{display:flex;align-items:center;gap:12px;padding:8px;border:1px solid var(--line);border-radius:10px}
li>div{min-width:0;flex:1}
.vote{display:flex;flex-direction:column;align-items:center;min-width:46px;padding:4px 6px;border:1px solid var(--line);background:var(--soft);font-weight:700;font-size:13px;line-height:1.2}
.vote[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:var(--on-accent)}
.t{font-weight:600;overflow-wrap:anywhere;padding:0}
.t:hover{text-decoration:underline}
.muted{color:var(--muted);font-size:12px}
.sec{align-self:flex-start;padding:6px 12px;border:1px solid var(--line);font-weight:600;font-size:13px}
.sec:hover{background:var(--soft)}
form{display:flex;flex-direction:column;gap:10px;padding-top:14px;border-top:1px solid var(--line)}
label{display:flex;flex-direction:column;gap:4px;font-weight:600;font-size:13px}
.row{flex-direction:row;align-items:center;gap:8px;margin-bottom:10px}
input,textarea,select{width:100%;padding:8px 10px;border:1px solid var(--line);border-radius:8px;background:var(--bg);font-weight:400;font-size:14px}
select{width:auto;flex:1}
textarea{resize:vertical;min-height:64px}
.primary{align-self:flex-start;padding:9px 18px;background:var(--accent);color:var(--on-accent);font-weight:700}
[aria-busy=true]{opacity:.6}
.similar{border:1px dashed var(--line);border-radius:10px;padding:8px}
.similar ul{margin:6px 0 0}
.similar li{padding:6px}
.error{color:var(--danger);font-size:13px}
.note{color:var(--ok);font-size:13px}
.error:empty,.note:empty{display:none}
.pre{white-space:pre-wrap;overflow-wrap:anywhere}
.detail{gap:10px}
.detail .t{font-size:17px}
.top{display:flex;gap:12px;align-items:flex-start}
section{margin-bottom:14px}
article{padding:10px 0;border-bottom:1px solid var(--line)}
.html{overflow-wrap:anywhere}.html p,.html ul{margin:6px 0}.html ul{display:block;padding-inline-start:20px}.html li{display:list-item;border:0;padding:0}.html a{text-decoration:underline}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:480px){.panel,.panel.bottom-left,.panel.top-right,.panel.top-left{inset:0;width:100%;height:100%;border:0;border-radius:0}.list form{order:-1;border-top:0;padding:0 0 14px;margin-bottom:14px;border-bottom:1px solid var(--line)}}
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
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Black or white, whichever reads better on the workspace's accent colour (WCAG relative luminance). */
function onAccent(hex: string) {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const c = parseInt(hex.slice(at, at + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  })
  const l = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
  return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? '#000' : '#fff'
}

class HttpError extends Error {
  constructor(message: string, readonly status: number) { super(message) }
}

const mount: PanelMount = (ctx: PanelContext): PanelApi => {
  const { t, lang, dir } = translator(pickLocale([ctx.locale, ...navigator.languages]))
  const base = `${ctx.api}/public/${encodeURIComponent(ctx.workspace)}`
  const storeKey = `chorus.visitor.${ctx.workspace}`
  let boards: Board[] = []
  let board: Board | undefined
  let identified: Session | null = null
  let visitor = recall()
  let loading: Promise<void> | undefined
  let anonymousAllowed = true
  let page = 0
  let listedAs: string | undefined
  let claiming: string | undefined
  let shown = false
  let listing = 0

  function recall(): Visitor | null {
    try {
      const stored = JSON.parse(localStorage.getItem(storeKey) ?? 'null') as Visitor | null
      return stored?.token && !(stored.expires && Date.parse(stored.expires) < Date.now()) ? stored : null
    } catch {
      return null
    }
  }
  function remember(next: Visitor | null) {
    visitor = next
    try {
      next ? localStorage.setItem(storeKey, JSON.stringify(next)) : localStorage.removeItem(storeKey)
    } catch {
      // Storage may be off (private mode, sandboxed frames): the session lasts for this page.
    }
    showWho()
  }
  const bearer = () => identified?.token ?? visitor?.token

  async function request<T>(path: string, body?: Record<string, unknown>): Promise<{ data: T; response: Response }> {
    const headers: Record<string, string> = {}
    const token = bearer()
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
      throw new HttpError(response.status === 429 ? t('tooMany') : detail ?? data?.message ?? t('requestFailed', String(response.status)), response.status)
    }
    return { data: data as T, response }
  }
  const get = async <T>(path: string) => (await request<T>(path)).data

  // ---- the frame: header, tabs, views ----
  const heading = h('h2', { id: 'cw-title' }, 'Feedback')
  // Decorative next to the workspace name, hence the empty alt.
  const logo = h('img', { class: 'logo', alt: '', hidden: true, referrerpolicy: 'no-referrer' })
  const close = h('button', { type: 'button', class: 'x', 'aria-label': t('close'), onclick: () => api.close() }, '×')
  const tabs = (['ideas', 'roadmap', 'news'] as const).map((name) => h('button', {
    type: 'button', role: 'tab', id: `cw-tab-${name}`, 'aria-controls': `cw-${name}`, 'aria-selected': String(name === 'ideas'), tabindex: name === 'ideas' ? 0 : -1,
    onclick: () => select(name),
  }, t(name)))
  const tablist = h('div', { role: 'tablist', 'aria-labelledby': 'cw-title' }, ...tabs)
  tablist.onkeydown = (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key]
    if (!step) return
    const at = tabs.findIndex((tab) => tab.getAttribute('aria-selected') === 'true')
    const next = tabs[(at + (dir === 'rtl' ? -step : step) + tabs.length) % tabs.length]!
    next.click()
    next.focus()
  }

  // Ideas: board switcher, posts, paging, and the form.
  const boardSelect = h('select', { id: 'cw-board', onchange: () => chooseBoard(boardSelect.value) })
  const switcher = h('label', { class: 'row', hidden: true }, t('board'), boardSelect)
  const boardHeading = h('h3', { id: 'cw-posts' }, t('ideas'))
  const listState = h('p', { class: 'muted', role: 'status' }, t('loading'))
  const list = h('ul', { 'aria-labelledby': 'cw-posts' })
  const more = h('button', { type: 'button', class: 'sec', hidden: true, onclick: () => void loadPage(page + 1) }, t('more'))
  const field = (label: string, control: HTMLElement) => h('label', {}, label, control)
  const title = h('input', { name: 'title', required: true, maxlength: 200, autocomplete: 'off', oninput: () => suggestSoon() })
  const similarList = h('ul', { 'aria-labelledby': 'cw-similar' })
  const similar = h('div', { class: 'similar', hidden: true }, h('p', { class: 'muted', id: 'cw-similar' }, t('similar')), similarList)
  const details = h('textarea', { name: 'details', rows: 3, maxlength: 20000 })
  const email = h('input', { type: 'email', name: 'email', required: true, maxlength: 254, autocomplete: 'email' })
  const emailField = field(t('email'), email)
  const who = h('p', { class: 'muted' })
  const notYou = h('button', { type: 'button', class: 'sec', hidden: true, onclick: () => remember(null) }, t('notYou'))
  const error = h('p', { class: 'error', role: 'alert' })
  const note = h('p', { class: 'note', role: 'status' })
  const notice = h('p', { class: 'note', role: 'status' })
  const submit = h('button', { type: 'submit', class: 'primary' }, t('submit'))
  const formHeading = h('h3', { id: 'cw-new' }, t('newIn', t('ideas')))
  const form = h('form', { novalidate: true, 'aria-labelledby': 'cw-new', onsubmit: onSubmit },
    formHeading, field(t('title'), title), similar, field(t('details'), details), emailField, who, notYou, submit)
  const listView = h('div', { class: 'view list' }, switcher, boardHeading, listState, list, more, form)
  const detailView = h('div', { class: 'view detail', hidden: true })
  const messages = h('div', {}, error, note, notice)
  const ideas = h('div', { role: 'tabpanel', id: 'cw-ideas', 'aria-labelledby': 'cw-tab-ideas' }, messages, listView, detailView)
  const roadmap = h('div', { role: 'tabpanel', id: 'cw-roadmap', 'aria-labelledby': 'cw-tab-roadmap', hidden: true }, h('p', { class: 'muted' }, t('loading')))
  const news = h('div', { role: 'tabpanel', id: 'cw-news', 'aria-labelledby': 'cw-tab-news', hidden: true }, h('p', { class: 'muted' }, t('loading')))
  const body = h('div', { class: 'body' }, ideas, roadmap, news)
  const panel = h('div', { class: `panel ${ctx.theme} ${ctx.position}`, role: 'dialog', 'aria-labelledby': 'cw-title', lang, dir, hidden: true },
    h('header', {}, h('div', { class: 'brand' }, logo, heading), close), tablist, body)
  panel.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return
    event.stopPropagation()
    api.close()
  })
  ctx.root.append(h('style', {}, CSS), panel)

  const loaded = new Set<string>()
  function select(name: 'ideas' | 'roadmap' | 'news') {
    tabs.forEach((tab, at) => {
      const on = tab.id === `cw-tab-${name}`
      tab.setAttribute('aria-selected', String(on))
      tab.tabIndex = on ? 0 : -1
      ;[ideas, roadmap, news][at]!.hidden = !on
    })
    if (loaded.has(name)) return
    loaded.add(name)
    if (name === 'roadmap') void loadRoadmap()
    if (name === 'news') void loadNews()
  }

  // ---- posts ----
  function voteButton(post: Post) {
    // Named by its content (no aria-label), so the visible count is part of the name.
    const count = h('span', {}, String(post.votes), h('span', { class: 'sr' }, ` ${post.votes === 1 ? t('vote1') : t('votes')}`))
    const button = h('button', { type: 'button', class: 'vote', 'aria-pressed': String(Boolean(post.voted)) },
      h('span', { class: 'sr' }, `${t('voteFor', post.title)}, `), h('span', { 'aria-hidden': 'true' }, '▲'), count)
    button.dataset.post = post.id
    button.onclick = () => void vote(post)
    return button
  }

  function postItem(post: Post) {
    const open = h('button', { type: 'button', class: 't', onclick: () => void openPost(post.id) }, post.title)
    return h('li', {}, voteButton(post), h('div', {}, open, h('p', { class: 'muted' }, post.status)))
  }

  async function loadPage(number: number) {
    if (!board) return
    more.setAttribute('aria-busy', 'true')
    const mine = ++listing
    try {
      listedAs = bearer()
      const result = await get<Page<Post>>(`/boards/${encodeURIComponent(board.slug)}/posts?sort=top&per_page=${PER_PAGE}&page=${number}`)
      // A newer listing (another board, or the visitor identified meanwhile) wins.
      if (mine !== listing) return
      page = result.page
      if (number === 1) list.replaceChildren()
      list.append(...result.items.map(postItem))
      more.hidden = result.page >= result.total_pages
      listState.textContent = list.childElementCount ? '' : t('empty')
    } catch (failure) {
      listState.textContent = t('failed', (failure as Error).message)
    } finally {
      more.removeAttribute('aria-busy')
    }
  }

  function chooseBoard(slug: string) {
    board = boards.find((candidate) => candidate.slug === slug)
    if (!board) return
    boardSelect.value = board.slug
    boardHeading.textContent = board.name
    formHeading.textContent = t('newIn', board.name)
    list.replaceChildren()
    listState.textContent = t('loading')
    showList()
    return loadPage(1)
  }

  async function load() {
    try {
      const info = await get<Workspace>('')
      const ws = info.workspace
      heading.textContent = ws.name
      if (ws.logo_url) {
        logo.src = ws.logo_url
        logo.hidden = false
      }
      const accent = ws.accent_color ?? ws.settings?.brand_color
      if (accent && /^#[0-9a-f]{6}$/i.test(accent)) {
        for (const [name, value] of [['accent', accent], ['on-accent', onAccent(accent)]]) {
          panel.style.setProperty(`--${name}`, value!)
          ;(ctx.root.host as HTMLElement).style.setProperty(`--chorus-${name}`, value!)
        }
      }
      anonymousAllowed = (ws.allow_anonymous ?? ws.settings?.allow_anonymous) !== false
      boards = info.boards
      boardSelect.replaceChildren(...boards.map((candidate) => h('option', { value: candidate.slug }, candidate.name)))
      switcher.hidden = boards.length < 2
      const wanted = ctx.board ?? ws.default_board ?? ws.settings?.default_board
      const first = wanted && boards.some((candidate) => candidate.slug === wanted) ? wanted : ctx.board ? undefined : boards[0]?.slug
      if (!first) throw new Error('This board is not available.')
      api.refresh()
      await chooseBoard(first)
    } catch (failure) {
      loading = undefined
      listState.textContent = t('failed', (failure as Error).message)
    }
  }

  // ---- identity: identified end user, a remembered visitor, or an e-mail address ----
  function showWho() {
    const anonymous = !identified && !visitor
    emailField.hidden = !anonymous || !anonymousAllowed
    email.required = !emailField.hidden
    notYou.hidden = Boolean(identified) || !visitor
    who.textContent = identified
      ? t('postingAs', identified.user.name ?? identified.user.email ?? '')
      : visitor
        ? `${t('postingAs', visitor.email)}${visitor.verified === false ? ` (${t('unconfirmed')})` : ''}`
        : anonymousAllowed ? '' : t('signIn')
  }

  /**
   * An end-user write. Anonymous visitors name themselves by e-mail once; the session the answer
   * carries is kept so later visits act (and see their votes) as the same visitor. An address that
   * was confirmed elsewhere is 401: the visitor proves it by e-mail link (a claim), then we retry.
   */
  async function write<T>(path: string, payload: Record<string, unknown>, needEmail: keyof Words): Promise<T | undefined> {
    const token = bearer()
    let address: string | undefined
    if (!token) {
      if (!anonymousAllowed) {
        error.textContent = t('signIn')
        return
      }
      address = email.value.trim()
      if (!EMAIL.test(address)) {
        error.textContent = t(needEmail)
        email.focus()
        return
      }
    }
    try {
      const { data, response } = await request<T>(path, address ? { ...payload, email: address } : payload)
      const issued = response.headers.get('chorus-session-token')
      const verified = (data as { verified?: boolean } | null)?.verified
      if (!identified && (issued || visitor)) {
        remember({ token: issued ?? visitor!.token, expires: response.headers.get('chorus-session-expires') ?? visitor?.expires, email: address ?? visitor!.email, verified: verified ?? visitor?.verified ?? !address })
      }
      if (address) notice.textContent = t('confirm', address)
      return data
    } catch (failure) {
      if ((failure as HttpError).status !== 401 || identified) throw failure
      if (token) {
        // The remembered session ended: ask for the address again.
        remember(null)
        throw new Error(t('needEmail'))
      }
      return claim(address!, () => write<T>(path, payload, needEmail))
    }
  }

  async function claim<T>(address: string, retry: () => Promise<T | undefined>): Promise<T | undefined> {
    if (claiming === address) return
    claiming = address
    try {
      const started = (await request<{ claim_id: string }>('/visitors', { email: address })).data
      notice.textContent = t('claim', address)
      // The link may be opened on another device; give up after 15 minutes.
      for (let i = 0; i < 600; i++) {
        await sleep(1500)
        const { data, response } = await request<{ status: string; session_token?: string; session_expires_at?: string }>(`/visitors/${encodeURIComponent(started.claim_id)}`)
        if (response.status === 200 && data.status === 'confirmed' && data.session_token) {
          remember({ token: data.session_token, expires: data.session_expires_at, email: address, verified: true })
          notice.textContent = t('claimed')
          return retry()
        }
      }
    } finally {
      claiming = undefined
    }
  }

  function pressed(post: Post) {
    for (const button of panel.querySelectorAll<HTMLButtonElement>(`.vote[data-post="${post.id}"]`)) {
      button.setAttribute('aria-pressed', String(Boolean(post.voted)))
      button.lastElementChild!.firstChild!.textContent = String(post.votes)
    }
  }

  async function vote(post: Post) {
    error.textContent = note.textContent = ''
    const buttons = panel.querySelectorAll<HTMLButtonElement>(`.vote[data-post="${post.id}"]`)
    if (buttons[0]?.getAttribute('aria-busy')) return
    buttons.forEach((button) => button.setAttribute('aria-busy', 'true'))
    try {
      const result = await write<{ voted: boolean; votes: number }>(`/posts/${post.id}/votes`, {}, 'needEmailVote')
      if (!result) return
      post.votes = result.votes
      post.voted = result.voted
      pressed(post)
      note.textContent = result.voted ? t('voted', post.title) : t('unvoted', post.title)
      return result
    } catch (failure) {
      error.textContent = (failure as Error).message
    } finally {
      buttons.forEach((button) => button.removeAttribute('aria-busy'))
    }
  }

  async function onSubmit(event: Event) {
    event.preventDefault()
    error.textContent = note.textContent = ''
    const text = title.value.trim()
    if (!text) {
      error.textContent = t('needTitle')
      return title.focus()
    }
    if (!board || submit.getAttribute('aria-busy')) return
    submit.setAttribute('aria-busy', 'true')
    try {
      const post = await write<Post>(`/boards/${encodeURIComponent(board.slug)}/posts`, { title: text, body: details.value.trim() || undefined }, 'needEmail')
      if (!post) return
      title.value = details.value = ''
      similar.hidden = true
      list.prepend(postItem(post))
      listState.textContent = ''
      note.textContent = t('thanks')
      ctx.emit('post.created', post)
    } catch (failure) {
      error.textContent = (failure as Error).message
    } finally {
      submit.removeAttribute('aria-busy')
    }
  }

  // ---- duplicate suggestions while the title is typed ----
  let timer: ReturnType<typeof setTimeout> | undefined
  let asked = 0
  function suggestSoon() {
    clearTimeout(timer)
    timer = setTimeout(() => void suggest(), 300)
  }
  async function suggest() {
    const q = title.value.trim()
    const mine = ++asked
    if (q.length < 3) {
      similar.hidden = true
      return
    }
    // Whole words only: the word still being typed would match nothing yet.
    const words = q.split(/\s+/)
    const whole = /\s$/.test(title.value) || words.length < 2 ? q : words.slice(0, -1).join(' ')
    const query = `q=${encodeURIComponent(whole)}&per_page=5`
    // Workspace-wide when the server offers it, else within the board.
    const found = await get<Page<Post>>(`/posts?${query}`)
      .catch(() => board ? get<Page<Post>>(`/boards/${encodeURIComponent(board.slug)}/posts?${query}`) : { items: [] as Post[] })
      .catch(() => ({ items: [] as Post[] }))
    if (mine !== asked) return
    similarList.replaceChildren(...found.items.map((post) => h('li', {},
      h('div', {}, h('button', { type: 'button', class: 't', onclick: () => void openPost(post.id) }, post.title), h('p', { class: 'muted' }, `${post.votes} ${post.votes === 1 ? t('vote1') : t('votes')}`)),
      h('button', { type: 'button', class: 'sec', 'aria-label': `${t('voteInstead')}: ${post.title}`, onclick: () => void voteInstead(post) }, t('voteInstead')))))
    similar.hidden = found.items.length === 0
  }
  async function voteInstead(post: Post) {
    if (post.voted) return
    const result = await vote(post)
    if (!result?.voted) return
    title.value = details.value = ''
    similar.hidden = true
  }

  // ---- post detail with public comments ----
  function showList() {
    detailView.hidden = true
    listView.hidden = false
    // Back into the post form (the detail's comment form borrows them), each before the next.
    form.insertBefore(notYou, submit)
    form.insertBefore(who, notYou)
    form.insertBefore(emailField, who)
  }

  async function openPost(id: string) {
    error.textContent = note.textContent = ''
    select('ideas')
    const back = h('button', { type: 'button', class: 'sec', onclick: () => {
      showList()
      panel.querySelector<HTMLButtonElement>(`.vote[data-post="${id}"]`)?.focus()
    } }, `← ${t('back')}`)
    const content = h('div', { class: 'view detail' }, h('p', { class: 'muted', role: 'status' }, t('loading')))
    detailView.replaceChildren(back, content)
    listView.hidden = true
    detailView.hidden = false
    back.focus()
    try {
      const post = await get<Post & { comments: Comment[] }>(`/posts/${encodeURIComponent(id)}`)
      const comments = h('ul', { 'aria-labelledby': 'cw-comments' }, ...post.comments.map(commentItem))
      const text = h('textarea', { name: 'comment', rows: 3, maxlength: 10000, required: true })
      const send = h('button', { type: 'submit', class: 'primary' }, t('send'))
      const commentForm = h('form', { novalidate: true, onsubmit: async (event: Event) => {
        event.preventDefault()
        error.textContent = note.textContent = ''
        if (!text.value.trim() || send.getAttribute('aria-busy')) return text.focus()
        send.setAttribute('aria-busy', 'true')
        try {
          const made = await write<Comment>(`/posts/${encodeURIComponent(id)}/comments`, { body: text.value.trim() }, 'needEmail')
          if (!made) return
          text.value = ''
          empty.remove()
          comments.append(commentItem(made))
          note.textContent = t('commented')
        } catch (failure) {
          error.textContent = (failure as Error).message
        } finally {
          send.removeAttribute('aria-busy')
        }
      } }, field(t('comment'), text), emailField, who, notYou, send)
      const empty = h('p', { class: 'muted' }, t('noComments'))
      content.replaceChildren(
        h('div', { class: 'top' }, voteButton(post), h('div', {}, h('h3', { class: 't', id: 'cw-post' }, post.title), h('p', { class: 'muted' }, post.status))),
        post.body ? h('p', { class: 'pre' }, post.body) : '',
        h('h4', { id: 'cw-comments' }, t('comments')), post.comments.length ? '' : empty, comments, commentForm)
    } catch (failure) {
      content.replaceChildren(h('p', { class: 'error' }, t('failed', (failure as Error).message)))
    }
  }

  const date = (iso: string) => new Intl.DateTimeFormat(lang, { dateStyle: 'medium' }).format(new Date(iso))
  const commentItem = (comment: Comment) => h('li', {}, h('div', {}, h('p', { class: 'muted' }, `${comment.author.name} · ${date(comment.created_at)}`), h('p', { class: 'pre' }, comment.body)))

  // ---- roadmap and what's new ----
  async function loadRoadmap() {
    try {
      const { groups } = await get<{ groups: { status_kind: 'planned' | 'in_progress' | 'complete'; total: number; items: Post[] }[] }>('/roadmap')
      roadmap.replaceChildren(...groups.map((group) => h('section', { 'aria-labelledby': `cw-rm-${group.status_kind}` },
        h('h3', { id: `cw-rm-${group.status_kind}` }, `${t(group.status_kind)} (${group.total})`),
        group.items.length
          ? h('ul', {}, ...group.items.map((post) => h('li', {}, h('div', {}, h('button', { type: 'button', class: 't', onclick: () => void openPost(post.id) }, post.title), h('p', { class: 'muted' }, `${post.votes} ${post.votes === 1 ? t('vote1') : t('votes')}`)))))
          : h('p', { class: 'muted' }, t('nothing')))))
    } catch (failure) {
      loaded.delete('roadmap')
      roadmap.replaceChildren(h('p', { class: 'error' }, t('failed', (failure as Error).message)))
    }
  }

  async function loadNews() {
    try {
      const { items } = await get<Page<Entry>>('/changelog?per_page=20')
      news.replaceChildren(...(items.length ? items.map((entry) => {
        // Rendered from Markdown and sanitised by the server.
        const html = h('div', { class: 'html' })
        html.innerHTML = entry.body_html
        return h('article', { 'aria-labelledby': `cw-e-${entry.id}` }, h('h4', { id: `cw-e-${entry.id}` }, entry.title), h('p', { class: 'muted' }, date(entry.published_at)), html,
          entry.posts?.length ? h('ul', {}, ...entry.posts.map((post) => h('li', {}, h('button', { type: 'button', class: 't', onclick: () => void openPost(post.id) }, post.title)))) : '')
      }) : [h('p', { class: 'muted' }, t('noNews'))]))
    } catch (failure) {
      // A server without a changelog answers 404: nothing to show, not an error.
      if ((failure as HttpError).status === 404) return news.replaceChildren(h('p', { class: 'muted' }, t('noNews')))
      loaded.delete('news')
      news.replaceChildren(h('p', { class: 'error' }, t('failed', (failure as Error).message)))
    }
  }

  const api: PanelApi = {
    open() {
      loading ??= load()
      api.refresh()
      // Shown once the first posts are in (or after two seconds), so nothing in it moves as they arrive.
      shown = true
      void Promise.race([loading, sleep(2000)]).then(() => {
        if (!shown) return
        panel.hidden = false
        close.focus()
      })
    },
    close() {
      if (!shown) return
      shown = false
      panel.hidden = true
      ctx.closed()
    },
    refresh() {
      void ctx.session().then((current) => {
        identified = current
        showWho()
        // Identify settled after the list loaded: list again so the user's own votes show.
        if (board && listedAs !== bearer()) void loadPage(1)
      })
    },
  }
  return api
}

;(window as unknown as { __chorusPanel: PanelMount }).__chorusPanel = mount
