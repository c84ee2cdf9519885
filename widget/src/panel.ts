// widget-panel.js: the feedback panel, loaded by widget.js on first open (budget 30 KiB gzipped). It
// renders into the loader's shadow root, so the host page's CSS cannot reach it.
import { h } from './dom.ts'
import { pickLocale, translator } from './i18n.ts'
import { openButton, votesWord } from './panel-posts.ts'
import { similarPosts } from './panel-similar.ts'
import { panelIdentity } from './panel-identity.ts'
import { proofOfWork as solveProofOfWork } from './proof-of-work.ts'
import { applyAccent, CSS } from './panel-style.ts'
import { renderNews, renderRoadmap, tabStrip, type TabName } from './panel-tabs.ts'
import { publicApi, type Board, type Comment, type Page, type Post, type Workspace } from './public-api.ts'
import type { PanelApi, PanelContext, PanelMount } from './types.ts'

const PER_PAGE = 50

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const mount: PanelMount = (ctx: PanelContext): PanelApi => {
  const { t, lang, dir } = translator(pickLocale([ctx.locale, ...navigator.languages]))
  let boards: Board[] = []
  let board: Board | undefined
  let loading: Promise<void> | undefined
  // `settings.proof_of_work`: an anonymous or unconfirmed visitor's post carries a solved challenge.
  let proofOfWork = false
  let page = 0
  let listedAs: string | undefined
  let shown = false
  let listing = 0

  const bearer = () => identity.bearer()
  const { request, get } = publicApi({ api: ctx.api, workspace: ctx.workspace, bearer, tooMany: t('tooMany'), requestFailed: (status) => t('requestFailed', String(status)) })

  // ---- the frame: header, tabs, views ----
  const heading = h('h2', { id: 'cw-title' }, 'Feedback')
  // Decorative next to the workspace name, hence the empty alt.
  const logo = h('img', { class: 'logo', alt: '', hidden: true, referrerpolicy: 'no-referrer' })
  const close = h('button', { type: 'button', class: 'x', 'aria-label': t('close'), onclick: () => api.close() }, '×')

  // Ideas: board switcher, posts, paging, and the form.
  const boardSelect = h('select', { id: 'cw-board', onchange: () => chooseBoard(boardSelect.value) })
  const switcher = h('label', { class: 'row', hidden: true }, t('board'), boardSelect)
  const boardHeading = h('h3', { id: 'cw-posts' }, t('ideas'))
  const listState = h('p', { class: 'muted', role: 'status' }, t('loading'))
  const list = h('ul', { 'aria-labelledby': 'cw-posts' })
  const more = h('button', { type: 'button', class: 'sec', hidden: true, onclick: () => void loadPage(page + 1) }, t('more'))
  const field = (label: string, control: HTMLElement) => h('label', {}, label, control)
  const title = h('input', { name: 'title', required: true, maxlength: 200, autocomplete: 'off', oninput: () => similar.soon() })
  const details = h('textarea', { name: 'details', rows: 3, maxlength: 20000 })
  const similar = similarPosts({
    get, t, board: () => board, openPost,
    similar: async (draft) => (await request<{ items: { post: Post }[] }>('/similar', { title: draft, locale: lang, limit: 5 })).data.items.map((item) => item.post),
    async voteInstead(post) {
      if (!(await vote(post))?.voted) return false
      title.value = details.value = ''
      return true
    },
  }, title)
  const email = h('input', { type: 'email', name: 'email', required: true, maxlength: 254, autocomplete: 'email' })
  const emailField = field(t('email'), email)
  const who = h('p', { class: 'muted' })
  const notYou = h('button', { type: 'button', class: 'sec', hidden: true, onclick: () => identity.forget() }, t('notYou'))
  const error = h('p', { class: 'error', role: 'alert' })
  const note = h('p', { class: 'note', role: 'status' })
  const notice = h('p', { class: 'note', role: 'status' })
  const identity = panelIdentity({ workspace: ctx.workspace, lang, t, request, fields: { email, emailField, who, notYou, error, notice }, confirmed: async () => { if (board) await loadPage(1) } })
  const submit = h('button', { type: 'submit', class: 'primary' }, t('submit'))
  const formHeading = h('h3', { id: 'cw-new' }, t('newIn', t('ideas')))
  const form = h('form', { novalidate: true, 'aria-labelledby': 'cw-new', onsubmit: onSubmit },
    formHeading, field(t('title'), title), similar.element, field(t('details'), details), emailField, who, notYou, submit)
  const listView = h('div', { class: 'view list' }, switcher, boardHeading, listState, list, more, form)
  const detailView = h('div', { class: 'view detail', hidden: true })
  const messages = h('div', {}, error, note, notice)
  const ideas = h('div', { role: 'tabpanel', id: 'cw-ideas', 'aria-labelledby': 'cw-tab-ideas' }, messages, listView, detailView)
  const roadmap = h('div', { role: 'tabpanel', id: 'cw-roadmap', 'aria-labelledby': 'cw-tab-roadmap', hidden: true }, h('p', { class: 'muted' }, t('loading')))
  const news = h('div', { role: 'tabpanel', id: 'cw-news', 'aria-labelledby': 'cw-tab-news', hidden: true }, h('p', { class: 'muted' }, t('loading')))
  const loaded = new Set<TabName>()
  const { element: tablist, select } = tabStrip(t, dir, { ideas, roadmap, news }, (name) => {
    if (loaded.has(name)) return
    loaded.add(name)
    const tab = { get, t, date, openPost }
    const render = name === 'roadmap' ? renderRoadmap(tab, roadmap) : name === 'news' ? renderNews(tab, news) : undefined
    // A tab that could not be read tries again when it is chosen next.
    void render?.then((shown) => { if (!shown) loaded.delete(name) })
  })
  const body = h('div', { class: 'body' }, ideas, roadmap, news)
  const panel = h('div', { class: `panel ${ctx.theme} ${ctx.position}`, role: 'dialog', 'aria-labelledby': 'cw-title', lang, dir, hidden: true },
    h('header', {}, h('div', { class: 'brand' }, logo, heading), close), tablist, body)
  panel.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return
    event.stopPropagation()
    api.close()
  })
  ctx.root.append(h('style', {}, CSS), panel)

  // ---- posts ----
  function voteButton(post: Post) {
    // Named by its content (no aria-label), so the visible count is part of the name.
    const count = h('span', {}, String(post.votes), h('span', { class: 'sr' }, ` ${votesWord(t, post.votes)}`))
    const button = h('button', { type: 'button', class: 'vote', 'aria-pressed': String(Boolean(post.voted)) },
      h('span', { class: 'sr' }, `${t('voteFor', post.title)}, `), h('span', { 'aria-hidden': 'true' }, '▲'), count)
    button.dataset.post = post.id
    button.onclick = () => void vote(post)
    return button
  }

  function postItem(post: Post) {
    const open = openButton(openPost, post)
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
      applyAccent(ws.accent_color ?? ws.settings?.brand_color, panel, ctx.root.host as HTMLElement)
      identity.allowAnonymous((ws.allow_anonymous ?? ws.settings?.allow_anonymous) !== false)
      proofOfWork = ws.settings?.proof_of_work === true
      boards = info.boards
      boardSelect.replaceChildren(...boards.map((candidate) => h('option', { value: candidate.slug }, candidate.name)))
      switcher.hidden = boards.length < 2
      const wanted = ctx.board ?? ws.default_board ?? ws.settings?.default_board
      const first = wanted && boards.some((candidate) => candidate.slug === wanted) ? wanted : ctx.board ? undefined : boards[0]?.slug
      if (!first) throw new Error('This board is not available.')
      api.refresh()
      await chooseBoard(first)
      // A claim started before a reload: keep following it until its link is opened or it expires.
      identity.resume()
    } catch (failure) {
      loading = undefined
      listState.textContent = t('failed', (failure as Error).message)
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
      const result = await identity.write<{ voted: boolean; votes: number }>(`/posts/${post.id}/votes`, {}, 'needEmailVote')
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
      const challenge = proofOfWork && !identity.identified() ? await solveProofOfWork(ctx.api) : undefined
      const post = await identity.write<Post>(`/boards/${encodeURIComponent(board.slug)}/posts`, { title: text, body: details.value.trim() || undefined, locale: lang, ...(challenge && { challenge }) }, 'needEmail')
      if (!post) return
      title.value = details.value = ''
      similar.hide()
      // A held post is on no list until the team approves it (docs/moderation.md): the writer is told so.
      if (post.moderation === 'held') {
        note.textContent = t('held')
        return
      }
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
          const made = await identity.write<Comment>(`/posts/${encodeURIComponent(id)}/comments`, { body: text.value.trim() }, 'needEmail')
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
  // The team's replies carry a badge, so a visitor tells an answer from another visitor's comment.
  const commentItem = (comment: Comment) => h('li', {}, h('div', {}, h('p', { class: 'muted' }, comment.author.name, ...(comment.author.type === 'team' ? [' ', h('span', { class: 'team' }, t('team'))] : []), ` · ${date(comment.created_at)}`), h('p', { class: 'pre' }, comment.body)))

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
        identity.identify(current)
        // Identify settled after the list loaded: list again so the user's own votes show.
        if (board && listedAs !== bearer()) void loadPage(1)
      })
    },
  }
  return api
}

;(window as unknown as { __chorusPanel: PanelMount }).__chorusPanel = mount
