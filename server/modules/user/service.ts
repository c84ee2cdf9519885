import { eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { users } from '../../db/schema/index.ts'

export async function updateProfile(db: Db, userId: string, input: { name?: string; locale?: string }) {
  const [user] = await db
    .update(users)
    .set({ ...(input.name !== undefined && { name: input.name.trim() }), ...(input.locale !== undefined && { locale: input.locale }), updatedAt: sql`now()` })
    .where(eq(users.id, userId))
    .returning()
  if (!user) throw new Error(`user ${userId} disappeared during update`)
  return user
}
