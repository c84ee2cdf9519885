import { and, asc, count, eq } from 'drizzle-orm'
import { isUniqueViolation, type Db } from '../../db/client.ts'
import { labels, postLabels } from '../../db/schema/index.ts'
import { invalid, notFound, slugTaken } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'

const SLUG_MAX = 48

/** "Won't fix / Later!" → "wont-fix-later"; accents are dropped rather than turned into dashes. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/['\u2019]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '')
}

function slugFromName(name: string): string {
  const slug = slugify(name)
  if (slug.length < 2) throw invalid(['body', 'slug'], 'No slug of at least 2 letters or digits can be derived from the name: send a slug')
  return slug
}

export const listLabels = (db: Db, workspaceId: string) =>
  db.select().from(labels).where(eq(labels.workspaceId, workspaceId)).orderBy(asc(labels.name), asc(labels.id))

export async function createLabel(db: Db, workspaceId: string, input: { name: string; slug?: string; color?: string | null }) {
  const slug = input.slug ?? slugFromName(input.name)
  try {
    const [label] = await db.insert(labels).values({ id: newId('label'), workspaceId, slug, name: input.name.trim(), color: input.color ?? null }).returning()
    return label!
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTaken(slug)
    throw error
  }
}

/** Renaming keeps the slug: slugs are stable identifiers and only change when one is sent. */
export async function updateLabel(db: Db, workspaceId: string, labelId: string, input: { name?: string; slug?: string; color?: string | null }) {
  const changes = {
    ...(input.name !== undefined && { name: input.name.trim() }),
    ...(input.slug !== undefined && { slug: input.slug }),
    ...(input.color !== undefined && { color: input.color }),
  }
  const where = and(eq(labels.workspaceId, workspaceId), eq(labels.id, labelId))
  try {
    const [label] = Object.keys(changes).length
      ? await db.update(labels).set(changes).where(where).returning()
      : await db.select().from(labels).where(where)
    if (!label) throw notFound('Label')
    return label
  } catch (error) {
    if (isUniqueViolation(error) && input.slug) throw slugTaken(input.slug)
    throw error
  }
}

/** Posts lose the label with it (post_labels cascades); the posts themselves stay. */
export async function deleteLabel(db: Db, workspaceId: string, labelId: string) {
  const [label] = await db.delete(labels).where(and(eq(labels.workspaceId, workspaceId), eq(labels.id, labelId))).returning({ id: labels.id })
  if (!label) throw notFound('Label')
}

/** How many posts carry each label (what deleting one takes off); labels on no post are absent. The API answers the same with GET /posts?label=…. */
export async function labelPostCounts(db: Db, workspaceId: string): Promise<Map<string, number>> {
  const rows = await db.select({ labelId: postLabels.labelId, posts: count() }).from(postLabels)
    .innerJoin(labels, eq(labels.id, postLabels.labelId)).where(eq(labels.workspaceId, workspaceId)).groupBy(postLabels.labelId)
  return new Map(rows.map((row) => [row.labelId, row.posts]))
}
