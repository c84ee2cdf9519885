// One e-mail for everything an end user has not heard yet: updates grouped by post, a status flipped
// back and forth within the batch collapsed (or dropped when it ends where it started), in their
// language, plain text plus simple HTML in the workspace's colour.
import { escapeHtml as escape } from '../../lib/mail.ts'
import { mailTranslator } from './i18n.ts'

export interface PendingUpdate {
  eventId: string
  postId: string
  kind: 'status' | 'reply' | 'merged'
  data: Record<string, any>
  createdAt: Date
}

type Author = { type: string; name: string } | null
/** What happened to one post, as mail and the `end_user.notified` event tell it. */
export interface PostNews {
  post: { id: string; title: string }
  status: { from: string; to: string; message: string | null; author: Author } | null
  replies: { id: string; body: string; author: Author }[]
  merged_into: { id: string; title: string } | null
}

/** Oldest first in, per post out; a post whose only news was a status change undone in the batch drops out. */
export function summarise(updates: PendingUpdate[]): PostNews[] {
  const byPost = new Map<string, PostNews & { statuses: PendingUpdate[] }>()
  for (const update of [...updates].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.eventId.localeCompare(b.eventId))) {
    const news = byPost.get(update.postId) ?? { post: update.data.post, status: null, replies: [] as PostNews['replies'], merged_into: null, statuses: [] as PendingUpdate[] }
    byPost.set(update.postId, news)
    if (update.kind === 'status') news.statuses.push(update)
    if (update.kind === 'reply') news.replies.push({ id: update.data.comment.id, body: update.data.comment.body, author: update.data.comment.author ?? null })
    if (update.kind === 'merged') news.merged_into = update.data.into
  }
  return [...byPost.values()].flatMap(({ statuses, ...news }) => {
    const first = statuses[0]
    const last = statuses.at(-1)
    if (first && last && first.data.from !== last.data.to) {
      const message = statuses.map((update) => update.data.message as string | null).filter(Boolean).at(-1) ?? null
      news.status = { from: first.data.from, to: last.data.to, message, author: last.data.author ?? null }
    }
    return news.status || news.replies.length || news.merged_into ? [news] : []
  })
}

export interface MailLinks {
  post: (postId: string) => string
  stopPost: (postId: string) => string
  stopAll: string
}

export interface Brand { name: string; color: string | null }

/** Subject, text and HTML of the e-mail; `locale` as stored on the end user. */
export function renderNews(news: PostNews[], locale: string | null, brand: Brand, links: MailLinks) {
  const { t, lang, dir } = mailTranslator(locale)
  const color = brand.color ?? '#1f4fd1'
  const authorName = (author: Author) => author?.name ?? brand.name
  const count = news.reduce((sum, item) => sum + (item.status ? 1 : 0) + item.replies.length + (item.merged_into ? 1 : 0), 0)
  const subject = `[${brand.name}] ${news.length === 1 ? t('subjectOne', news[0]!.post.title) : t('subjectMany', count)}`

  const text: string[] = [t('intro', brand.name), '']
  const html: string[] = [`<div lang="${lang}" dir="${dir}" style="font:15px/1.5 system-ui,sans-serif;max-width:36rem">`, `<div style="height:4px;background:${escape(color)}"></div>`, `<p>${escape(t('intro', brand.name))}</p>`]
  const badge = `<span style="display:inline-block;padding:0 .4em;border-radius:4px;background:${escape(color)};color:#fff;font-size:12px">${escape(t('team'))}</span>`
  for (const item of news) {
    text.push(`== ${item.post.title} ==`)
    html.push(`<h2 style="font-size:18px;margin:1.2em 0 .4em">${escape(item.post.title)}</h2>`)
    if (item.status) {
      text.push(t('status', item.status.from, item.status.to))
      html.push(`<p><strong>${escape(t('status', item.status.from, item.status.to))}</strong></p>`)
      if (item.status.message) {
        text.push(`${authorName(item.status.author)} [${t('team')}]: ${item.status.message}`)
        html.push(`<blockquote style="margin:0;padding-inline-start:.8em;border-inline-start:3px solid ${escape(color)}"><p>${escape(authorName(item.status.author))} ${badge}</p><p style="white-space:pre-wrap">${escape(item.status.message)}</p></blockquote>`)
      }
    }
    for (const reply of item.replies) {
      text.push(`${t('reply', `${authorName(reply.author)} [${t('team')}]`)}`, reply.body.split('\n').map((line) => `> ${line}`).join('\n'))
      html.push(`<p>${escape(t('reply', authorName(reply.author)))} ${badge}</p><blockquote style="margin:0;padding-inline-start:.8em;border-inline-start:3px solid ${escape(color)};white-space:pre-wrap">${escape(reply.body)}</blockquote>`)
    }
    if (item.merged_into) {
      text.push(t('merged', item.post.title, item.merged_into.title))
      html.push(`<p>${escape(t('merged', item.post.title, item.merged_into.title))}</p>`)
    }
    const target = item.merged_into?.id ?? item.post.id
    text.push(`${t('view')}: ${links.post(target)}`, `${t('stopPost')}: ${links.stopPost(target)}`, '')
    html.push(`<p><a href="${escape(links.post(target))}" style="color:${escape(color)}">${escape(t('view'))}</a> · <a href="${escape(links.stopPost(target))}" style="color:#6b7280;font-size:12px">${escape(t('stopPost'))}</a></p>`)
  }
  text.push('--', t('why'), `${t('stopAll', brand.name)}: ${links.stopAll}`, '')
  html.push(`<p style="font-size:12px;color:#6b7280">${escape(t('why'))} <a href="${escape(links.stopAll)}" style="color:#6b7280">${escape(t('stopAll', brand.name))}</a></p></div>`)
  return { subject, text: text.join('\n'), html: html.join('\n') }
}
