// `@mention` of a member in an internal note: the member is e-mailed, whatever their subscriptions say.
// A mention is `@` followed by the member's e-mail address, the part of it before the @, or their name
// (case-insensitive), and not followed by another letter or digit: `@ada` is Ada, not Adam.
import { and, eq, inArray } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { members, notificationEvents, posts, users } from '../../db/schema/index.ts'
import type { OutboxEvent } from '../../events/outbox.ts'
import { newId } from '../../lib/ids.ts'

type Data = Record<string, any>

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const mentions = (body: string, handle: string) => new RegExp(`(^|[^\\p{L}\\p{N}@])@${escapeRegExp(handle)}(?![\\p{L}\\p{N}])`, 'iu').test(body)

/** Notification rows (e-mail, pending) for members mentioned in the batch's internal notes; written before subscriptions' rows, so a mention wins. */
export async function notifyMentions(tx: Db | Tx, rows: OutboxEvent[]) {
  const notes = rows.filter((event) => event.type === 'comment.created' && (event.data as Data).comment?.internal && String((event.data as Data).comment?.body ?? '').includes('@'))
  if (!notes.length) return
  const workspaceIds = [...new Set(notes.map((event) => event.workspaceId))]
  const team = await tx.select({ workspaceId: members.workspaceId, userId: users.id, email: users.email, name: users.name })
    .from(members).innerJoin(users, eq(users.id, members.userId))
    .where(and(inArray(members.workspaceId, workspaceIds), eq(members.status, 'active')))
  const postIds = [...new Set(notes.map((event) => (event.data as Data).post_id as string))]
  const titles = new Map((await tx.select({ id: posts.id, title: posts.title }).from(posts).where(inArray(posts.id, postIds))).map((post) => [post.id, post.title]))
  const values = notes.flatMap((event) => {
    const data = event.data as Data
    const body = String(data.comment.body)
    const author = data.comment.author as { id: string | null; name: string }
    return team
      .filter((member) => member.workspaceId === event.workspaceId && member.userId !== author.id)
      .filter((member) => [member.email, member.email.split('@')[0]!, member.name].some((handle) => handle && mentions(body, handle)))
      .map((member) => ({
        id: newId('notificationEvent'),
        workspaceId: event.workspaceId,
        userId: member.userId,
        subscriptionId: null,
        eventId: event.id,
        eventType: event.type,
        channel: 'email' as const,
        subject: `${author.name} mentioned you on "${titles.get(data.post_id) ?? 'a post'}": ${body.slice(0, 80)}`,
        data: event.data,
        emailStatus: 'pending' as const,
      }))
  })
  if (values.length) await tx.insert(notificationEvents).values(values).onConflictDoNothing()
}
