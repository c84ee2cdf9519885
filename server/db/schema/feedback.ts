import { sql } from 'drizzle-orm'
import { boolean, customType, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from './accounts.ts'
import { at, createdAt, id } from './columns.ts'
import { apiKeys, workspaces } from './workspaces.ts'

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' })

export const STATUS_KINDS = ['open', 'planned', 'in_progress', 'complete', 'closed'] as const
export type StatusKind = (typeof STATUS_KINDS)[number]

const workspaceId = () => text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' })

export const boards = pgTable('boards', {
  id: id(),
  workspaceId: workspaceId(),
  slug: text('slug').notNull(),
  name: text('name').notNull(),
  description: text('description'),
  isPrivate: boolean('is_private').notNull().default(false),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [uniqueIndex('boards_workspace_slug_key').on(table.workspaceId, table.slug)])

export const statuses = pgTable('statuses', {
  id: id(),
  workspaceId: workspaceId(),
  name: text('name').notNull(),
  kind: text('kind', { enum: STATUS_KINDS }).notNull(),
  color: text('color').notNull().default('#6b7280'),
  position: integer('position').notNull(),
  /** The status new posts get. Exactly one per workspace. */
  isDefault: boolean('is_default').notNull().default(false),
  createdAt: createdAt(),
}, (table) => [uniqueIndex('statuses_workspace_name_key').on(table.workspaceId, table.name)])

export const labels = pgTable('labels', {
  id: id(),
  workspaceId: workspaceId(),
  slug: text('slug').notNull(),
  name: text('name').notNull(),
  color: text('color'),
  createdAt: createdAt(),
}, (table) => [uniqueIndex('labels_workspace_slug_key').on(table.workspaceId, table.slug)])

/** People who give feedback: identified by the customer's JWT (external_id) or anonymous with an e-mail. */
export const endUsers = pgTable('end_users', {
  id: id(),
  workspaceId: workspaceId(),
  externalId: text('external_id'),
  email: text('email'),
  name: text('name'),
  avatarUrl: text('avatar_url'),
  company: text('company'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [
  uniqueIndex('end_users_external_key').on(table.workspaceId, table.externalId),
  uniqueIndex('end_users_anonymous_email_key').on(table.workspaceId, table.email).where(sql`external_id is null`),
])

/** Who wrote a post or comment: exactly one of the three is set. */
const authorColumns = () => ({
  authorUserId: text('author_user_id').references(() => users.id, { onDelete: 'set null' }),
  authorEndUserId: text('author_end_user_id').references(() => endUsers.id, { onDelete: 'set null' }),
  authorKeyId: text('author_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
  /** Kept so the author still reads right after the user, end user or key is gone. */
  authorName: text('author_name'),
})

export const posts = pgTable('posts', {
  id: id(),
  workspaceId: workspaceId(),
  boardId: text('board_id').notNull().references(() => boards.id, { onDelete: 'cascade' }),
  title: text('title').notNull(),
  body: text('body').notNull().default(''),
  statusId: text('status_id').notNull().references(() => statuses.id),
  ownerUserId: text('owner_user_id').references(() => users.id, { onDelete: 'set null' }),
  ...authorColumns(),
  voteCount: integer('vote_count').notNull().default(0),
  /** Public (non-internal, not deleted) comments; internal ones never count in public. */
  commentCount: integer('comment_count').notNull().default(0),
  mergedIntoId: text('merged_into_id'),
  search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('english', coalesce(title, '') || ' ' || coalesce(body, ''))`),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [
  index('posts_board_created_idx').on(table.boardId, table.createdAt),
  index('posts_workspace_idx').on(table.workspaceId),
  index('posts_search_idx').using('gin', table.search),
])

export const postLabels = pgTable('post_labels', {
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  labelId: text('label_id').notNull().references(() => labels.id, { onDelete: 'cascade' }),
}, (table) => [primaryKey({ columns: [table.postId, table.labelId] }), index('post_labels_label_idx').on(table.labelId)])

export const comments = pgTable('comments', {
  id: id(),
  workspaceId: workspaceId(),
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  parentId: text('parent_id'),
  body: text('body').notNull(),
  internal: boolean('internal').notNull().default(false),
  ...authorColumns(),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [index('comments_post_created_idx').on(table.postId, table.createdAt)])

/** One vote per voter per post: a voter is a dashboard user or an end user. */
export const votes = pgTable('votes', {
  id: id(),
  workspaceId: workspaceId(),
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
  endUserId: text('end_user_id').references(() => endUsers.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
}, (table) => [
  uniqueIndex('votes_post_user_key').on(table.postId, table.userId),
  uniqueIndex('votes_post_end_user_key').on(table.postId, table.endUserId),
  index('votes_post_created_idx').on(table.postId, table.createdAt),
])

export const statusChanges = pgTable('status_changes', {
  id: id(),
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  fromStatusId: text('from_status_id'),
  toStatusId: text('to_status_id').notNull(),
  changedByUserId: text('changed_by_user_id'),
  changedByKeyId: text('changed_by_key_id'),
  createdAt: createdAt(),
}, (table) => [index('status_changes_post_idx').on(table.postId, table.createdAt)])

/** The durable outbox: written in the transaction of the change it describes; the webhook worker delivers it. */
export const events = pgTable('events', {
  id: id(),
  workspaceId: workspaceId(),
  type: text('type').notNull(),
  data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  createdAt: createdAt(),
}, (table) => [index('events_workspace_created_idx').on(table.workspaceId, table.createdAt)])
