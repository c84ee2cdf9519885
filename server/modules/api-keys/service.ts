import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { apiKeys } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { randomBase62, sha256Hex } from '../../lib/secrets.ts'
import { newId } from '../../lib/ids.ts'
import { KEY_PREFIX } from '../../plugins/credentials.ts'

export async function createApiKey(db: Db, workspaceId: string, createdBy: string, input: { name: string; scopes: string[] }) {
  const secret = `${KEY_PREFIX}${randomBase62(32)}`
  const [key] = await db.insert(apiKeys).values({
    id: newId('apiKey'),
    workspaceId,
    name: input.name.trim(),
    start: secret.slice(0, KEY_PREFIX.length + 4),
    keyHash: await sha256Hex(secret),
    scopes: input.scopes,
    createdBy,
  }).returning()
  return { key: key!, secret }
}

export const listApiKeys = (db: Db, workspaceId: string) =>
  db.select().from(apiKeys).where(and(eq(apiKeys.workspaceId, workspaceId), isNull(apiKeys.revokedAt))).orderBy(desc(apiKeys.createdAt))

const liveKey = (workspaceId: string, keyId: string) => and(eq(apiKeys.id, keyId), eq(apiKeys.workspaceId, workspaceId), isNull(apiKeys.revokedAt))

export async function updateScopes(db: Db, workspaceId: string, keyId: string, scopes: string[]) {
  const [key] = await db.update(apiKeys).set({ scopes }).where(liveKey(workspaceId, keyId)).returning()
  if (!key) throw notFound('API key')
  return key
}

/** Revocation is a flag the per-request lookup filters on, so it takes effect on the very next request. */
export async function revokeApiKey(db: Db, workspaceId: string, keyId: string) {
  const [key] = await db.update(apiKeys).set({ revokedAt: sql`now()` }).where(liveKey(workspaceId, keyId)).returning({ id: apiKeys.id })
  if (!key) throw notFound('API key')
}
