import { t } from 'elysia'
import { Enum, Timestamp } from '../../lib/schema.ts'
import { pageEnvelope, PagingQuery } from '../../lib/paging-schema.ts'
import { PostResponse, postExample } from '../posts/model.ts'

const heldExample = { post: { ...postExample, moderation: 'held' }, score: 9, reasons: ['burst_ip: 3', 'links: 3', 'suspicious_link: 2', 'burst_address: 2'] }

export const HeldItem = t.Object({
  post: PostResponse,
  score: t.Nullable(t.Integer({ description: 'The spam score the write got (docs/moderation.md#rules); null if it was held without one' })),
  reasons: t.Array(t.String(), { description: 'The rules that scored, `rule: points`, highest first' }),
}, { $id: 'HeldPost' })

export const HeldPage = pageEnvelope(HeldItem, 'HeldPostPage', [{ items: [heldExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const HeldListQuery = t.Object({ ...PagingQuery }, { additionalProperties: false })
export const ModerationPostParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }), post_id: t.String({ maxLength: 64, examples: ['post_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })
export const BlockParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }), block_id: t.String({ maxLength: 64, examples: ['blk_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

export const RejectedResponse = t.Object({ status: t.Literal('deleted'), id: t.String() }, { $id: 'RejectedPost', examples: [{ status: 'deleted', id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8' }] })

export const BlockCreate = t.Object({
  kind: Enum(['email', 'domain', 'ip'], { description: 'What is blocked: one address, every address at a domain, or one IP address' }),
  value: t.String({ minLength: 3, maxLength: 254, description: 'The address, domain (e.g. `spam.example`) or IP; stored only as an HMAC under the server\'s secret' }),
  note: t.Optional(t.String({ maxLength: 500, description: 'Why, for the team' })),
}, { additionalProperties: false, $id: 'BlockCreate', examples: [{ kind: 'domain', value: 'spam.example', note: 'Link spam, November' }] })

const blockExample = { id: 'blk_0mi9x2k3aq1b2c3d4e5f6g7h8', kind: 'domain', hint: 'sp…ple', note: 'Link spam, November', created_at: '2026-11-22T09:30:00.000Z' }
export const BlockResponse = t.Object({
  id: t.String(),
  kind: Enum(['email', 'domain', 'ip']),
  hint: t.String({ description: 'The first two and last three characters of the value: the value itself is not kept' }),
  note: t.Nullable(t.String()),
  created_at: Timestamp,
}, { $id: 'Block', examples: [blockExample] })
export const BlockPage = pageEnvelope(BlockResponse, 'BlockPage', [{ items: [blockExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const BlockDeleted = t.Object({ status: t.Literal('deleted'), id: t.String() }, { $id: 'BlockDeleted', examples: [{ status: 'deleted', id: 'blk_0mi9x2k3aq1b2c3d4e5f6g7h8' }] })
