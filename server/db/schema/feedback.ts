import { sql } from 'drizzle-orm'
import { bigint, boolean, customType, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
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
  /**
   * When the identity was vouched for: at identify (the workspace signed it), when a member or key named
   * it, or when an anonymous visitor clicked the confirmation link. Null: an unconfirmed anonymous e-mail.
   */
  verifiedAt: at('verified_at'),
  /** The last confirmation e-mail sent after an anonymous write (at most one a day). */
  confirmationSentAt: at('confirmation_sent_at'),
  /** The language of their e-mail: one of the widget's (en, de, fr, es, ja, ar, he), from their last public write. */
  locale: text('locale'),
  /** The last permanent failure (SMTP 5xx) mailing `email`: no post update is sent while it is set. */
  emailBouncedAt: at('email_bounced_at'),
  /** They unsubscribed from every post update of the workspace. */
  notificationsOffAt: at('notifications_off_at'),
  /** The secret in their unsubscribe links, made the first time they are mailed a post update. */
  mailToken: text('mail_token'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [
  uniqueIndex('end_users_external_key').on(table.workspaceId, table.externalId),
  uniqueIndex('end_users_mail_token_key').on(table.mailToken),
  uniqueIndex('end_users_anonymous_email_key').on(table.workspaceId, table.email).where(sql`external_id is null`),
  index('end_users_workspace_id_idx').on(table.workspaceId, table.id),
])

/**
 * A one-click confirmation link sent to an anonymous visitor's address (hashed token, single use). With
 * `claim_hash` it is also a claim: the visitor who asked for it polls with the claim id and receives one
 * session once the link is clicked.
 */
export const visitorConfirmations = pgTable('visitor_confirmations', {
  id: id(),
  workspaceId: workspaceId(),
  endUserId: text('end_user_id').notNull().references(() => endUsers.id, { onDelete: 'cascade' }),
  tokenHash: text('token_hash').notNull(),
  claimHash: text('claim_hash'),
  expiresAt: at('expires_at').notNull(),
  claimExpiresAt: at('claim_expires_at'),
  confirmedAt: at('confirmed_at'),
  claimedAt: at('claimed_at'),
  createdAt: createdAt(),
}, (table) => [
  uniqueIndex('visitor_confirmations_token_key').on(table.tokenHash),
  uniqueIndex('visitor_confirmations_claim_key').on(table.claimHash),
  index('visitor_confirmations_end_user_idx').on(table.endUserId),
])

/** Who wrote a post or comment: exactly one of the three is set. */
const authorColumns = () => ({
  authorUserId: text('author_user_id').references(() => users.id, { onDelete: 'set null' }),
  authorEndUserId: text('author_end_user_id').references(() => endUsers.id, { onDelete: 'set null' }),
  authorKeyId: text('author_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
  /** Kept so the author still reads right after the user, end user or key is gone. */
  authorName: text('author_name'),
})

export interface TrackerIssue { id: string; identifier: string; url: string }

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
  /** `held`: waiting in the moderation queue, on no public read and with no event raised yet (migration 0047). */
  moderation: text('moderation', { enum: ['held'] }),
  /** The issue-tracker issue made from this post (integrations module); the inbound tracker webhook finds the post by its id. */
  trackerIssue: jsonb('tracker_issue').$type<TrackerIssue>(),
  /** The language of the post (en, de, fr, es, ja, ar, he): which text-search configuration indexes it (migration 0030). */
  language: text('language').notNull().default('en'),
  search: tsvector('search').generatedAlwaysAs(sql`chorus_search_document(language, title, body)`),
  /**
   * The `trending` sort key: ln(votes) plus the creation time in days × ln 2, i.e. votes halved per day
   * of age; null without votes. Its order never changes with the clock, so an index serves it.
   */
  trending: doublePrecision('trending').generatedAlwaysAs(sql`CASE WHEN vote_count > 0 THEN ln(vote_count) + extract(epoch from (created_at AT TIME ZONE 'UTC'))::double precision * (ln(2) / 86400) END`),
  /**
   * The post's label ids (sorted), kept in step with post_labels by triggers (migration 0021): the list
   * indexes carry them, so a label filter reads them from the index entry instead of probing post_labels.
   */
  labelIds: text('label_ids').array().notNull().default(sql`'{}'`),
  /**
   * Demand from verified votes (docs/demand.md), kept current by the triggers of migration 0029 on
   * votes, end users, companies and their links: never written by the application.
   */
  demandVerifiedVoters: integer('demand_verified_voters').notNull().default(0),
  demandCompanies: integer('demand_companies').notNull().default(0),
  demandMrr: bigint('demand_mrr', { mode: 'number' }).notNull().default(0),
  demandWeighted: doublePrecision('demand_weighted').notNull().default(0),
  /** The team's scoring inputs (reach, impact, ...) and the score the workspace's model gives them (null: unscored). */
  /**
   * The board list's read model (migration 0060, docs/architecture.md): the post's item of the team's list as JSON
   * text up to the MRR figure (`list_head` ends with `"mrr":`; the read writes the rest), rendered by a trigger on every change of the
   * post or of a row it shows; never written by the application.
   */
  listHead: text('list_head').notNull().default(''),
  factors: jsonb('factors').$type<Record<string, number>>().notNull().default({}),
  score: doublePrecision('score'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [
  index('posts_board_created_idx').on(table.boardId, table.createdAt),
  // One per sort of the board list, each with INCLUDE (status_id, label_ids, moderation) (migrations 0013, 0021 and 0061),
  // so status and label filters are read from the index.
  index('posts_list_new_idx').on(table.boardId, table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  index('posts_list_top_idx').on(table.boardId, table.voteCount.desc(), table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  index('posts_list_trending_idx').on(table.boardId, table.trending.desc().nullsLast(), table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  // The inbox's orders across a workspace's boards, each with INCLUDE (board_id, status_id, owner_user_id, label_ids) (migration 0026).
  index('posts_inbox_new_idx').on(table.workspaceId, table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  index('posts_inbox_top_idx').on(table.workspaceId, table.voteCount.desc(), table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  index('posts_inbox_trending_idx').on(table.workspaceId, table.trending.desc().nullsLast(), table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  index('posts_list_mrr_idx').on(table.boardId, table.demandMrr.desc(), table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  index('posts_list_companies_idx').on(table.boardId, table.demandCompanies.desc(), table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  index('posts_list_score_idx').on(table.boardId, table.score.desc().nullsLast(), table.createdAt.desc(), table.id.desc()).where(sql`merged_into_id IS NULL`),
  index('posts_workspace_idx').on(table.workspaceId),
  // A short pending list: every new post's duplicate check searches these (migration 0064).
  index('posts_search_idx').using('gin', table.search).with({ gin_pending_list_limit: 64 }),
  index('posts_title_trgm_idx').using('gin', sql`${table.title} gin_trgm_ops`).with({ gin_pending_list_limit: 64 }),
  index('posts_workspace_id_idx').on(table.workspaceId, table.id),
  index('posts_author_user_idx').on(table.authorUserId).where(sql`author_user_id IS NOT NULL`),
  index('posts_tracker_issue_idx').on(sql`(${table.trackerIssue}->>'id')`).where(sql`${table.trackerIssue} is not null`),
])

/** Unmerged posts per board and status, kept exact by a deferred trigger on posts: list totals without a count. */
export const boardPostCounts = pgTable('board_post_counts', {
  boardId: text('board_id').notNull().references(() => boards.id, { onDelete: 'cascade' }),
  statusId: text('status_id').notNull().references(() => statuses.id, { onDelete: 'cascade' }),
  posts: integer('posts').notNull().default(0),
}, (table) => [primaryKey({ columns: [table.boardId, table.statusId] })])

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
}, (table) => [
  index('comments_post_created_idx').on(table.postId, table.createdAt),
  index('comments_workspace_id_idx').on(table.workspaceId, table.id),
  index('comments_author_user_idx').on(table.authorUserId).where(sql`author_user_id IS NOT NULL`),
])

/** One vote per voter per post: a voter is a dashboard user or an end user. */
export const votes = pgTable('votes', {
  id: id(),
  workspaceId: workspaceId(),
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
  endUserId: text('end_user_id').references(() => endUsers.id, { onDelete: 'cascade' }),
  /** The unconfirmed widget session that cast it (`sid`): only it may take the vote back (docs/security.md#end-user-identity). */
  castBySession: text('cast_by_session'),
  createdAt: createdAt(),
}, (table) => [
  uniqueIndex('votes_post_user_key').on(table.postId, table.userId),
  uniqueIndex('votes_post_end_user_key').on(table.postId, table.endUserId),
  index('votes_post_created_idx').on(table.postId, table.createdAt),
  index('votes_workspace_id_idx').on(table.workspaceId, table.id),
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

/** The durable outbox: written in the transaction of the change it describes; the dispatcher fans it out to its subscribers. */
export const events = pgTable('events', {
  id: id(),
  workspaceId: workspaceId(),
  type: text('type').notNull(),
  data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  createdAt: createdAt(),
}, (table) => [index('events_workspace_created_idx').on(table.workspaceId, table.createdAt)])

/** Inbound e-mails already turned into a post or comment, by Message-ID, so a redelivery is ignored. */
export const inboundEmails = pgTable('inbound_emails', {
  workspaceId: workspaceId(),
  messageId: text('message_id').notNull(),
  postId: text('post_id').references(() => posts.id, { onDelete: 'set null' }),
  commentId: text('comment_id').references(() => comments.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
}, (table) => [primaryKey({ columns: [table.workspaceId, table.messageId] })])
