import { bigint, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { at, createdAt, id } from './columns.ts'
import { endUsers, posts } from './feedback.ts'
import { workspaces } from './workspaces.ts'

/** A customer's company (migration 0029): upserted by identify's `company` claim or PUT /companies/{external_id}. */
export const companies = pgTable('companies', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  externalId: text('external_id').notNull(),
  name: text('name').notNull(),
  /** Monthly recurring revenue in the currency's minor units (cents). */
  mrr: bigint('mrr', { mode: 'number' }).notNull().default(0),
  currency: text('currency').notNull().default('USD'),
  plan: text('plan'),
  seats: integer('seats'),
  attributes: jsonb('attributes').$type<Record<string, string | number | boolean | null>>().notNull().default({}),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [
  uniqueIndex('companies_workspace_external_key').on(table.workspaceId, table.externalId),
  index('companies_workspace_id_idx').on(table.workspaceId, table.id),
])

/** Which companies an end user belongs to; the demand triggers follow changes here. */
export const endUserCompanies = pgTable('end_user_companies', {
  endUserId: text('end_user_id').notNull().references(() => endUsers.id, { onDelete: 'cascade' }),
  companyId: text('company_id').notNull().references(() => companies.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
}, (table) => [primaryKey({ columns: [table.endUserId, table.companyId] }), index('end_user_companies_company_idx').on(table.companyId)])

/** Per post and company, how many of the company's verified voters voted: maintained by triggers only. */
export const postCompanyVotes = pgTable('post_company_votes', {
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  companyId: text('company_id').notNull().references(() => companies.id, { onDelete: 'cascade' }),
  voters: integer('voters').notNull(),
}, (table) => [primaryKey({ columns: [table.postId, table.companyId] }), index('post_company_votes_company_idx').on(table.companyId, table.postId)])

/** The history of a post's factors and score. */
export const scoreChanges = pgTable('score_changes', {
  id: id(),
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  factors: jsonb('factors').$type<Record<string, number>>().notNull(),
  fromScore: doublePrecision('from_score'),
  toScore: doublePrecision('to_score'),
  changedByUserId: text('changed_by_user_id'),
  changedByKeyId: text('changed_by_key_id'),
  createdAt: createdAt(),
}, (table) => [index('score_changes_post_idx').on(table.postId, table.createdAt)])
