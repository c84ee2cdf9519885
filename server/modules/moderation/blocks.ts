import { and, desc, eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { moderationBlocks } from '../../db/schema/index.ts'
import { conflict, invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { envelope, type Page } from '../../lib/paging.ts'
import type { Secrets } from '../../lib/secrets.ts'
import { canonical, hashValue, type BlockKind } from './service.ts'

const SHAPES: Record<BlockKind, RegExp> = {
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  domain: /^(?=.{3,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/,
  ip: /^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f:]*:[0-9a-f:.]+)$/,
}

/** Enough of the value for the team to recognise it, too little to read it back: the first two and last three characters. */
const hintOf = (value: string) => (value.length <= 6 ? `${value.slice(0, 1)}…` : `${value.slice(0, 2)}…${value.slice(-3)}`)

const toBlock = (row: typeof moderationBlocks.$inferSelect) => ({ id: row.id, kind: row.kind, hint: row.hint, note: row.note, created_at: row.createdAt.toISOString() })

export async function createBlock(db: Db, secrets: Pick<Secrets, 'deriveKey'>, workspaceId: string, input: { kind: BlockKind; value: string; note?: string }) {
  const value = canonical(input.kind, input.value)
  if (!SHAPES[input.kind].test(value)) throw invalid(['body', 'value'], `Not ${input.kind === 'ip' ? 'an IP address' : input.kind === 'email' ? 'an e-mail address' : 'a domain name'}`)
  const [row] = await db.insert(moderationBlocks).values({ id: newId('moderationBlock'), workspaceId, kind: input.kind, valueHash: await hashValue(secrets, input.kind, value), hint: hintOf(value), note: input.note ?? null })
    .onConflictDoNothing().returning()
  if (!row) throw conflict(`This ${input.kind} is already blocked`)
  return toBlock(row)
}

export async function listBlocks(db: Db, workspaceId: string, page: Page) {
  const rows = await db.select({ block: moderationBlocks, total: sql<number>`count(*) over ()`.mapWith(Number) }).from(moderationBlocks)
    .where(eq(moderationBlocks.workspaceId, workspaceId)).orderBy(desc(moderationBlocks.createdAt), desc(moderationBlocks.id)).limit(page.perPage).offset(page.offset)
  return envelope(rows.map((row) => toBlock(row.block)), page, rows[0]?.total ?? 0)
}

export async function deleteBlock(db: Db, workspaceId: string, blockId: string) {
  const [row] = await db.delete(moderationBlocks).where(and(eq(moderationBlocks.id, blockId), eq(moderationBlocks.workspaceId, workspaceId))).returning({ id: moderationBlocks.id })
  if (!row) throw notFound('Block')
  return { status: 'deleted' as const, id: row.id }
}
