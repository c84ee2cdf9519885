// Channel mappings: which events (of which board, or every board) go to which chat channel.
import { and, asc, eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { boards, chatChannelMappings } from '../../db/schema/index.ts'
import { invalid, notFound } from '../../errors.ts'
import type { EventType } from '../../events/outbox.ts'
import { newId } from '../../lib/ids.ts'
import { findBoard } from '../feedback/lookups.ts'
import { requireIntegration } from './service.ts'

export interface MappingInput { channel_id: string; board_slug?: string | null; events: string[] }
export type MappingChanges = Partial<MappingInput>

const selectMappings = (db: Db) =>
  db.select({ mapping: chatChannelMappings, boardSlug: boards.slug }).from(chatChannelMappings).leftJoin(boards, eq(boards.id, chatChannelMappings.boardId))

type MappingRow = Awaited<ReturnType<ReturnType<typeof selectMappings>['execute']>>[number]

export function toMappingResponse({ mapping, boardSlug }: MappingRow) {
  return {
    id: mapping.id,
    channel_id: mapping.channelId,
    board_slug: boardSlug,
    events: mapping.events as EventType[],
    created_at: mapping.createdAt.toISOString(),
    updated_at: mapping.updatedAt.toISOString(),
  }
}

async function getMapping(db: Db, workspaceId: string, mappingId: string) {
  const [row] = await selectMappings(db).where(and(eq(chatChannelMappings.id, mappingId), eq(chatChannelMappings.workspaceId, workspaceId)))
  if (!row) throw notFound('Channel mapping')
  return toMappingResponse(row)
}

/** A board named in the body that does not exist is a 422 on that field, not a 404 of the route. */
async function boardIdOf(db: Db, workspaceId: string, slug: string | null | undefined) {
  if (!slug) return null
  return (await findBoard(db, workspaceId, slug).catch(() => { throw invalid(['body', 'board_slug'], `Unknown board "${slug}"`) })).id
}

export async function listMappings(db: Db, workspaceId: string) {
  const rows = await selectMappings(db).where(eq(chatChannelMappings.workspaceId, workspaceId)).orderBy(asc(chatChannelMappings.id))
  return rows.map(toMappingResponse)
}

export async function createMapping(db: Db, workspaceId: string, input: MappingInput) {
  const integration = await requireIntegration(db, workspaceId, 'chat')
  const id = newId('chatMapping')
  await db.insert(chatChannelMappings).values({
    id, workspaceId, integrationId: integration.id, channelId: input.channel_id, boardId: await boardIdOf(db, workspaceId, input.board_slug), events: input.events,
  })
  return getMapping(db, workspaceId, id)
}

export async function updateMapping(db: Db, workspaceId: string, mappingId: string, changes: MappingChanges) {
  await getMapping(db, workspaceId, mappingId)
  await db.update(chatChannelMappings).set({
    ...(changes.channel_id !== undefined && { channelId: changes.channel_id }),
    ...(changes.board_slug !== undefined && { boardId: await boardIdOf(db, workspaceId, changes.board_slug) }),
    ...(changes.events !== undefined && { events: changes.events }),
    updatedAt: sql`now()`,
  }).where(eq(chatChannelMappings.id, mappingId))
  return getMapping(db, workspaceId, mappingId)
}

export async function deleteMapping(db: Db, workspaceId: string, mappingId: string) {
  const deleted = await db.delete(chatChannelMappings).where(and(eq(chatChannelMappings.id, mappingId), eq(chatChannelMappings.workspaceId, workspaceId))).returning({ id: chatChannelMappings.id })
  if (!deleted.length) throw notFound('Channel mapping')
}
