import { t } from 'elysia'
import type { labels } from '../../db/schema/index.ts'
import { HexColor, Slug, Timestamp } from '../../lib/schema.ts'

const Name = t.String({ minLength: 1, maxLength: 50, pattern: '\\S' })
const Color = t.Nullable(HexColor)

export const LabelCreate = t.Object({
  name: Name,
  slug: t.Optional(t.String({
    pattern: Slug.pattern, minLength: Slug.minLength, maxLength: Slug.maxLength,
    description: 'Derived from the name when absent: lowercased, accents dropped, other characters to single dashes',
  })),
  color: t.Optional(Color),
}, { additionalProperties: false, $id: 'LabelCreate', examples: [{ name: 'UI', color: '#8b5cf6' }] })

export const LabelUpdate = t.Object({
  name: t.Optional(Name),
  slug: t.Optional(Slug),
  color: t.Optional(Color),
}, { additionalProperties: false, $id: 'LabelUpdate', examples: [{ name: 'User interface', color: null }] })

export const LabelParams = t.Object({ label_id: t.String({ maxLength: 64, examples: ['lbl_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

export const LabelResponse = t.Object({
  id: t.String({ examples: ['lbl_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  slug: t.String(),
  name: t.String(),
  color: t.Nullable(t.String()),
  created_at: Timestamp,
}, { $id: 'Label', examples: [{ id: 'lbl_0mi9x2k3aq1b2c3d4e5f6g7h8', slug: 'ui', name: 'UI', color: '#8b5cf6', created_at: '2026-11-22T09:30:00.000Z' }] })

export const toLabelResponse = (label: typeof labels.$inferSelect) => ({
  id: label.id,
  slug: label.slug,
  name: label.name,
  color: label.color,
  created_at: label.createdAt.toISOString(),
})
