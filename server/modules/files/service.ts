import { eq, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import type { Db } from '../../db/client.ts'
import { files, users, workspaces, type FilePurpose } from '../../db/schema/index.ts'
import { ApiError } from '../../errors.ts'
import { isId, newId } from '../../lib/ids.ts'
import { sniffImageType } from '../../lib/image-type.ts'
import { UPLOAD_RULES } from './model.ts'

type FilesContext = Pick<AppContext, 'db' | 'storage' | 'log'>
type Owner = { userId: string } | { workspaceId: string }
interface Stored { id: string; key: string; purpose: FilePurpose; contentType: string; size: number }

/** Checks size and magic bytes, then writes the object under a fresh random key (no row yet). */
async function store(ctx: FilesContext, purpose: FilePurpose, file: File): Promise<Stored> {
  const rule = UPLOAD_RULES[purpose]
  if (file.size > rule.maxBytes) throw new ApiError('PAYLOAD_TOO_LARGE', `The ${purpose} must be at most ${rule.maxBytes / 1024} KiB`)
  const bytes = new Uint8Array(await file.arrayBuffer())
  const type = sniffImageType(bytes)
  if (!type || !rule.types.includes(type)) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `The ${purpose} must be ${rule.label}${type ? `, not ${type}` : ''} (judged by the file's content)`)
  }
  const id = newId('file')
  // The id's 16 random characters make the key unguessable; the uploader's file name is never used.
  await ctx.storage.put(id, bytes, type)
  return { id, key: id, purpose, contentType: type, size: bytes.byteLength }
}

/** Best effort after the database has committed: a leftover object is unreachable (no row serves it), a failure is only logged. */
async function discard(ctx: FilesContext, keys: string[]) {
  for (const key of keys) {
    await ctx.storage.delete(key).catch((error) => ctx.log.error('could not delete a stored file', { key, error: String(error) }))
  }
}

/** Stores the object, then in one transaction records it, points the owner at it and drops the row it replaces; the old object goes last. */
async function swap<T>(ctx: FilesContext, upload: Stored | null, owner: Owner, point: (tx: Db, fileId: string | null) => Promise<{ row: T; previous: string | null }>): Promise<T> {
  let previousKey: string | null = null
  let row: T
  try {
    row = await ctx.db.transaction(async (tx) => {
      if (upload) await tx.insert(files).values({ ...upload, ...owner })
      const pointed = await point(tx as unknown as Db, upload?.id ?? null)
      if (pointed.previous) {
        const [gone] = await tx.delete(files).where(eq(files.id, pointed.previous)).returning({ key: files.key })
        previousKey = gone?.key ?? null
      }
      return pointed.row
    })
  } catch (error) {
    if (upload) await discard(ctx, [upload.key])
    throw error
  }
  if (previousKey) await discard(ctx, [previousKey])
  return row
}

/** Sets (file) or removes (null) the user's avatar; returns the updated user. */
export async function setAvatar(ctx: FilesContext, userId: string, file: File | null) {
  const upload = file ? await store(ctx, 'avatar', file) : null
  return swap(ctx, upload, { userId }, async (tx, fileId) => {
    // FOR UPDATE: two concurrent uploads replace one another in turn, so neither leaves an orphan behind.
    const [before] = await tx.select({ previous: users.avatarFileId }).from(users).where(eq(users.id, userId)).for('update')
    const [row] = await tx.update(users).set({ avatarFileId: fileId, updatedAt: sql`now()` }).where(eq(users.id, userId)).returning()
    if (!before || !row) throw new Error(`user ${userId} disappeared during the avatar update`)
    return { row, previous: before.previous }
  })
}

/** Sets the workspace's logo or favicon; returns the updated workspace. */
export async function setWorkspaceImage(ctx: FilesContext, workspaceId: string, purpose: 'logo' | 'favicon', file: File) {
  const upload = await store(ctx, purpose, file)
  const column = purpose === 'logo' ? 'logoFileId' : 'faviconFileId'
  return swap(ctx, upload, { workspaceId }, async (tx, fileId) => {
    const [before] = await tx.select({ previous: workspaces[column] }).from(workspaces).where(eq(workspaces.id, workspaceId)).for('update')
    const [row] = await tx.update(workspaces).set({ [column]: fileId, updatedAt: sql`now()` }).where(eq(workspaces.id, workspaceId)).returning()
    if (!before || !row) throw new Error(`workspace ${workspaceId} disappeared during the ${purpose} update`)
    return { row, previous: before.previous }
  })
}

/** The stored file behind `/files/{id}`, or null. */
export async function openFile(ctx: FilesContext, fileId: string) {
  if (!isId('file', fileId)) return null
  const [row] = await ctx.db.select({ key: files.key, contentType: files.contentType }).from(files).where(eq(files.id, fileId))
  if (!row) return null
  const body = await ctx.storage.get(row.key)
  return body ? { contentType: row.contentType, body } : null
}

/**
 * For hard deletion: removes every stored object of a user or workspace and their rows. Call it before
 * deleting the owner (whose ON DELETE CASCADE would otherwise drop the rows and with them the keys).
 */
export async function deleteStoredFiles(ctx: FilesContext, owner: Owner): Promise<number> {
  const where = 'userId' in owner ? eq(files.userId, owner.userId) : eq(files.workspaceId, owner.workspaceId)
  const rows = await ctx.db.select({ id: files.id, key: files.key }).from(files).where(where)
  for (const row of rows) await ctx.storage.delete(row.key)
  if (rows.length) await ctx.db.delete(files).where(where)
  return rows.length
}
