import { t } from 'elysia'
import { PagingQuery, pageEnvelope } from '../../lib/paging-schema.ts'
import { Enum, Timestamp } from '../../lib/schema.ts'
import { TITLE_TEXT_RULE } from '../../lib/text.ts'

const PUBLISHED_AT = 'When the entry was (or is) published; null keeps it a draft. Setting it publishes: the linked posts move to the completed status and their voters are e-mailed once. A time in the future is refused (no scheduling); null on a published entry unpublishes it (a draft again; a later publish e-mails no voter twice).'
const BODY = 'Markdown (CommonMark). Raw HTML is shown as text, and only http(s), mailto and relative links are kept: `javascript:`, `vbscript:` and `data:` URLs (images included) are dropped.'
const POST_IDS = 'Posts of this workspace the entry ships; each one must exist (else 422, nothing is written). Replaces the whole list on update.'

export const changelogExample = {
  id: 'chg_0mi9x2k3aq1b2c3d4e5f6g7h8', title: 'Dark mode is here', body: 'Switch it on under **Settings**.', body_html: '<p>Switch it on under <strong>Settings</strong>.</p>\n',
  published_at: '2026-11-24T09:00:00.000Z', post_ids: ['post_0mi9x2k3aq1b2c3d4e5f6g7h8'], created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-24T09:00:00.000Z',
}

const PostIds = t.Array(t.String({ maxLength: 64 }), { maxItems: 50, uniqueItems: true, description: POST_IDS })
const Title = t.String({ minLength: 1, maxLength: 200, description: `The entry's heading. ${TITLE_TEXT_RULE}` })
const Body = t.String({ maxLength: 50_000, description: BODY })

export const ChangelogCreate = t.Object({
  title: Title,
  body: t.Optional(Body),
  published_at: t.Optional(t.Nullable(Timestamp, { description: PUBLISHED_AT })),
  post_ids: t.Optional(PostIds),
}, { additionalProperties: false, $id: 'ChangelogEntryCreate', examples: [{ title: 'Dark mode is here', body: 'Switch it on under **Settings**.', post_ids: ['post_0mi9x2k3aq1b2c3d4e5f6g7h8'], published_at: null }] })

export const ChangelogUpdate = t.Object({
  title: t.Optional(Title),
  body: t.Optional(Body),
  published_at: t.Optional(t.Nullable(Timestamp, { description: PUBLISHED_AT })),
  post_ids: t.Optional(PostIds),
}, { additionalProperties: false, minProperties: 1, $id: 'ChangelogEntryUpdate', examples: [{ published_at: '2026-11-24T09:00:00.000Z' }] })

export const ChangelogResponse = t.Object({
  id: t.String(),
  title: t.String(),
  body: t.String({ description: 'Markdown as written' }),
  body_html: t.String({ description: 'The body rendered to sanitised HTML' }),
  published_at: t.Nullable(Timestamp, { description: 'Null for a draft' }),
  post_ids: t.Array(t.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'ChangelogEntry', examples: [changelogExample] })

export const ChangelogListQuery = t.Object({
  ...PagingQuery,
  state: t.Optional(Enum(['draft', 'published'], { description: 'Only drafts or only published entries (default: both)' })),
}, { additionalProperties: false })

export const ChangelogListResponse = pageEnvelope(ChangelogResponse, 'ChangelogEntryPage', [{ items: [changelogExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const ChangelogIdParams = t.Object({ entry_id: t.String({ maxLength: 64, examples: ['chg_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

export const PublicChangelogEntry = t.Object({
  id: t.String(),
  title: t.String(),
  body_html: t.String({ description: 'Sanitised HTML' }),
  published_at: Timestamp,
  posts: t.Array(t.Object({ id: t.String(), title: t.String() }), { description: 'Linked posts on public boards; posts on private boards are left out' }),
}, { $id: 'PublicChangelogEntry', examples: [{ id: changelogExample.id, title: changelogExample.title, body_html: changelogExample.body_html, published_at: changelogExample.published_at, posts: [{ id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', title: 'Dark mode' }] }] })

export const PublicChangelogPage = pageEnvelope(PublicChangelogEntry, 'PublicChangelogPage', [{ items: [{ id: changelogExample.id, title: changelogExample.title, body_html: changelogExample.body_html, published_at: changelogExample.published_at, posts: [{ id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', title: 'Dark mode' }] }], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const PublicChangelogQuery = t.Object({ ...PagingQuery }, { additionalProperties: false })
export { PublicWorkspaceParams as PublicChangelogParams } from '../../lib/schema.ts'
export const UnsubscribeQuery = t.Object({ token: t.String({ minLength: 1, maxLength: 128, description: 'The token from the e-mail' }) })
export const HtmlPage = t.String({ description: 'An HTML page' })
