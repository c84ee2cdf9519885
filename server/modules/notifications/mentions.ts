// `@mention` of a member in an internal note: the member is e-mailed, whatever their subscriptions say.
// A mention is `@` followed by the member's e-mail address, the part of it before the @, or their name
// (case-insensitive), and not followed by another letter or digit: `@ada` is Ada, not Adam.
import { sql, type SqlRunner } from '../../db/sql-text.ts'
import type { OutboxEvent } from '../../events/outbox-event.ts'
import { newId } from '../../lib/ids.ts'
import { insertNotificationRows } from './rows.ts'

type Data = Record<string, any>

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const mentions = (body: string, handle: string) => new RegExp(`(^|[^\\p{L}\\p{N}@])@${escapeRegExp(handle)}(?![\\p{L}\\p{N}])`, 'iu').test(body)

/** Notification rows (e-mail, pending) for members mentioned in the batch's internal notes; written before subscriptions' rows, so a mention wins. */
export async function notifyMentions(tx: SqlRunner, rows: OutboxEvent[]) {
  const notes = rows.filter((event) => event.type === 'comment.created' && (event.data as Data).comment?.internal && String((event.data as Data).comment?.body ?? '').includes('@'))
  if (!notes.length) return
  const workspaceIds = [...new Set(notes.map((event) => event.workspaceId))]
  const team = await tx.rows<{ workspaceId: string; userId: string; email: string; name: string | null }>(sql`
    select m.workspace_id as "workspaceId", u.id as "userId", u.email, u.name from members m join users u on u.id = m.user_id
    where m.workspace_id = any(${workspaceIds}::text[]) and m.status = 'active'`)
  const postIds = [...new Set(notes.map((event) => (event.data as Data).post_id as string))]
  const titles = new Map((await tx.rows<{ id: string; title: string }>(sql`select id, title from posts where id = any(${postIds}::text[])`)).map((post) => [post.id, post.title]))
  const values = notes.flatMap((event) => {
    const data = event.data as Data
    const body = String(data.comment.body)
    const author = data.comment.author as { id: string | null; name: string }
    return team
      .filter((member) => member.workspaceId === event.workspaceId && member.userId !== author.id)
      .filter((member) => [member.email, member.email.split('@')[0]!, member.name].some((handle) => handle && mentions(body, handle)))
      .map((member) => ({
        id: newId('notificationEvent'),
        workspace_id: event.workspaceId,
        user_id: member.userId,
        subscription_id: null,
        event_id: event.id,
        event_type: event.type,
        channel: 'email',
        subject: `${author.name} mentioned you on "${titles.get(data.post_id) ?? 'a post'}": ${body.slice(0, 80)}`,
        data: event.data,
        email_status: 'pending' as const,
        digest: false,
      }))
  })
  await insertNotificationRows(tx, values)
}
