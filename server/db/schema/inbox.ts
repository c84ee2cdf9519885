import { boolean, index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { users } from './accounts.ts'
import { at, createdAt, id } from './columns.ts'
import { posts } from './feedback.ts'
import { workspaces } from './workspaces.ts'

const workspaceId = () => text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' })

/** The inbox's filters as a saved view keeps them (the query parameters of GET …/inbox, by name). */
export type InboxFilterValues = Record<string, string | number | boolean>

/** A saved inbox view (migration 0026): a member's own, or shared with the workspace; a key's views have no member and are shared. */
export const savedViews = pgTable('saved_views', {
  id: id(),
  workspaceId: workspaceId(),
  userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  filters: jsonb('filters').$type<InboxFilterValues>().notNull().default({}),
  shared: boolean('shared').notNull().default(false),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [index('saved_views_workspace_idx').on(table.workspaceId, table.createdAt)])

/** When a member last opened a post; the post is unread for them when it changed or got a comment after that. */
export const postReads = pgTable('post_reads', {
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  workspaceId: workspaceId(),
  readAt: at('read_at').notNull().defaultNow(),
}, (table) => [primaryKey({ columns: [table.userId, table.postId] }), index('post_reads_post_idx').on(table.postId)])
