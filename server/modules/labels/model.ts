import { t } from 'elysia'
import type { labels } from '../../db/schema/index.ts'
import { HexColor } from '../../lib/schema.ts'
import { Timestamp } from '../user/model.ts'
import { Slug } from '../workspaces/model.ts'

const Name = t.String({ minLength: 1, maxLength: 50, pattern: '\\S' })
const Color = t.Nullable(HexColor)

export const LabelCreate = t.Object({
  name: Name,
  slug: t.Optional(t.String({
    pattern: Slug.pattern, minLength: Slug.minLength, maxLength: Slug.maxLength,
    description: 'Derived from the name when absent: lowercased, accents dropped, other characters to single dashes',
  })),
  color: t.Optional(Color),
}, { additionalProperties: false, description: 'LabelCreate' })

export const LabelUpdate = t.Object({
  name: t.Optional(Name),
  slug: t.Optional(Slug),
  color: t.Optional(Color),
}, { additionalProperties: false, description: 'LabelUpdate' })

export const LabelParams = t.Object({ label_id: t.String({ maxLength: 64 }) })

export const LabelResponse = t.Object({
  id: t.String({ examples: ['lbl_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  slug: t.String(),
  name: t.String(),
  color: t.Nullable(t.String()),
  created_at: Timestamp,
}, { description: 'LabelResponse' })

export const toLabelResponse = (label: typeof labels.$inferSelect) => ({
  id: label.id,
  slug: label.slug,
  name: label.name,
  color: label.color,
  created_at: label.createdAt.toISOString(),
})
