// The chat message of an event: Block Kit with a plain-text fallback. User text is escaped for mrkdwn
// (& < >), so a post title cannot ping `<!channel>` or smuggle a link, and kept within Block Kit limits.
import { describeEvent } from '../notifications/fanout.ts'

export const escapeMrkdwn = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

export interface MessagePost { id: string; title: string; board: string; status: string; votes: number; body?: string }

const HEADLINE: Record<string, string> = {
  'post.created': 'New post',
  'post.updated': 'Post updated',
  'post.deleted': 'Post deleted',
  'post.merged': 'Post merged',
  'status.changed': 'Status changed',
  'comment.created': 'New comment',
  'comment.deleted': 'Comment deleted',
  'vote.created': 'New vote',
  'vote.deleted': 'Vote removed',
  'changelog.published': 'Changelog published',
}

/** `post` is the post the event is about (as it is now, or as it was for a deleted one); `link` its public page. */
export function chatMessage(type: string, data: Record<string, any>, post: MessagePost | null, link: string | null) {
  const text = clip(describeEvent(type, data), 3000)
  const headline = HEADLINE[type] ?? type
  const title = post ? escapeMrkdwn(clip(post.title, 150)) : ''
  // A link label ends at the first `>`, which escaping has removed from the title.
  const heading = post && link && type !== 'post.deleted' ? `*${headline}:* <${link}|${title}>` : `*${headline}:* ${title}`
  const detail = type === 'status.changed'
    ? `${escapeMrkdwn(String(data.from_status ?? ''))} → *${escapeMrkdwn(String(data.to_status ?? ''))}*`
    : type === 'comment.created'
      ? `> ${escapeMrkdwn(clip(String(data.comment?.body ?? ''), 500)).replace(/\n/g, '\n> ')}`
      : type === 'post.created' && post?.body
        ? escapeMrkdwn(clip(post.body, 500))
        : ''
  const blocks: unknown[] = [{ type: 'section', text: { type: 'mrkdwn', text: clip(detail ? `${heading}\n${detail}` : heading, 3000) } }]
  if (post) {
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `Board: *${escapeMrkdwn(post.board)}*  ·  Status: *${escapeMrkdwn(post.status)}*  ·  Votes: *${post.votes}*` }],
    })
  }
  return { text: escapeMrkdwn(text), blocks }
}
