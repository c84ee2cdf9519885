import { and, asc, desc, eq, ilike, inArray, or, sql, type SQL } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { companies, endUserCompanies, postCompanyVotes, posts } from '../../db/schema/index.ts'
import { invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { envelope, type Page } from '../../lib/paging.ts'
import { findPosts } from '../posts/queries.ts'

export type CompanyRow = typeof companies.$inferSelect

/** What PUT and identify's claims may set; absent fields keep their stored values. */
export interface CompanyInput {
  name?: string
  mrr?: number
  currency?: string
  plan?: string | null
  seats?: number | null
  attributes?: Record<string, string | number | boolean | null>
}

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))
/** Whether `code` is an ISO 4217 currency the runtime knows (Intl's list: about 300 codes, the historic ones included). */
export const knownCurrency = (code: string) => CURRENCIES.has(code)

export function checkCurrency(input: CompanyInput, loc: (string | number)[]) {
  if (input.currency !== undefined && !knownCurrency(input.currency)) throw invalid(loc, `${input.currency} is not an ISO 4217 currency code`)
}

/**
 * Creates the company under (workspace, external id) or updates the fields given; one statement, so two
 * concurrent upserts of one company both land. An MRR, currency or plan change moves the demand of every
 * post the company voted for in the same statement (triggers of migration 0029).
 */
export async function upsertCompany(db: Db | Tx, workspaceId: string, externalId: string, input: CompanyInput) {
  const set: Partial<typeof companies.$inferInsert> = {
    ...(input.name !== undefined && { name: input.name }),
    ...(input.mrr !== undefined && { mrr: input.mrr }),
    ...(input.currency !== undefined && { currency: input.currency }),
    ...(input.plan !== undefined && { plan: input.plan }),
    ...(input.seats !== undefined && { seats: input.seats }),
    ...(input.attributes !== undefined && { attributes: input.attributes }),
  }
  const [row] = await db.insert(companies).values({ id: newId('company'), workspaceId, externalId, name: externalId, ...set })
    .onConflictDoUpdate({ target: [companies.workspaceId, companies.externalId], set: { ...set, updatedAt: sql`now()` } })
    .returning()
  return row!
}

/** By the `co_` id or the external id (an external id that looks like a `co_` id is found by either lookup). */
export async function findCompany(db: Db | Tx, workspaceId: string, idOrExternal: string) {
  const [row] = await db.select().from(companies).where(and(eq(companies.workspaceId, workspaceId), or(eq(companies.externalId, idOrExternal), eq(companies.id, idOrExternal))))
    .orderBy(sql`${companies.externalId} = ${idOrExternal} desc`).limit(1)
  if (!row) throw notFound('Company')
  return row
}

const usersOf = sql<number>`(select count(*) from ${endUserCompanies} where ${endUserCompanies.companyId} = ${companies.id})::int`.mapWith(Number)

export async function listCompanies(db: Db, workspaceId: string, query: { sort?: 'mrr' | 'name' | 'new'; q?: string }, page: Page) {
  const where = and(eq(companies.workspaceId, workspaceId), query.q ? or(ilike(companies.name, `%${escapeLike(query.q)}%`), ilike(companies.externalId, `%${escapeLike(query.q)}%`)) : undefined)
  const order: SQL[] = query.sort === 'name' ? [asc(companies.name)] : query.sort === 'new' ? [desc(companies.createdAt)] : [desc(companies.mrr), asc(companies.name)]
  const rows = await db.select({ company: companies, users: usersOf, total: sql<number>`count(*) over ()`.mapWith(Number) }).from(companies).where(where)
    .orderBy(...order, asc(companies.id)).limit(page.perPage).offset(page.offset)
  let total = rows[0]?.total ?? 0
  if (!rows[0] && page.offset > 0) total = (await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(companies).where(where))[0]!.n
  return { rows, total }
}

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`)

export async function companyWithUsers(db: Db | Tx, workspaceId: string, idOrExternal: string) {
  const company = await findCompany(db, workspaceId, idOrExternal)
  const [counted] = await db.select({ users: sql<number>`count(*)`.mapWith(Number) }).from(endUserCompanies).where(eq(endUserCompanies.companyId, company.id))
  return { company, users: counted!.users }
}

/** What the company asked for (posts by its end users) and voted for (posts with its verified votes). Two queries. */
export async function companyActivity(db: Db, company: CompanyRow) {
  const members = sql`(select ${endUserCompanies.endUserId} from ${endUserCompanies} where ${endUserCompanies.companyId} = ${company.id})`
  const voted = sql`(select ${postCompanyVotes.postId} from ${postCompanyVotes} where ${postCompanyVotes.companyId} = ${company.id})`
  const [requested, votedFor] = await Promise.all([
    findPosts(db, and(eq(posts.workspaceId, company.workspaceId), sql`${posts.authorEndUserId} in ${members}`), [desc(posts.createdAt)], 100),
    findPosts(db, and(eq(posts.workspaceId, company.workspaceId), sql`${posts.id} in ${voted}`), [desc(posts.voteCount), desc(posts.createdAt)], 100),
  ])
  return { requested, voted: votedFor }
}

export async function deleteCompany(db: Db, workspaceId: string, idOrExternal: string) {
  const company = await findCompany(db, workspaceId, idOrExternal)
  // The companies_deleted_demand trigger unlinks its users first, taking its demand off every post.
  await db.delete(companies).where(eq(companies.id, company.id))
}

/**
 * Sets the companies an end user belongs to (identify): upserts each, then links exactly these, in the
 * caller's transaction. Links added or removed move the demand of the user's verified votes (triggers).
 */
export async function setEndUserCompanies(tx: Tx, workspaceId: string, endUserId: string, entries: (CompanyInput & { id: string })[]) {
  const ids: string[] = []
  for (const entry of entries) {
    const { id: externalId, ...input } = entry
    ids.push((await upsertCompany(tx, workspaceId, externalId, input)).id)
  }
  const current = await tx.select({ companyId: endUserCompanies.companyId }).from(endUserCompanies).where(eq(endUserCompanies.endUserId, endUserId))
  const gone = current.map((link) => link.companyId).filter((id) => !ids.includes(id))
  const added = ids.filter((id) => !current.some((link) => link.companyId === id))
  if (gone.length) await tx.delete(endUserCompanies).where(and(eq(endUserCompanies.endUserId, endUserId), inArray(endUserCompanies.companyId, gone)))
  if (added.length) await tx.insert(endUserCompanies).values(added.map((companyId) => ({ endUserId, companyId }))).onConflictDoNothing()
}

/**
 * Links (or unlinks) an end user to a company from the API; the demand triggers move the user's verified
 * votes onto (off) the company's share. Answers whether anything changed.
 */
export async function linkEndUser(db: Db, company: CompanyRow, endUserId: string, linked: boolean) {
  const rows = linked
    ? await db.insert(endUserCompanies).values({ endUserId, companyId: company.id }).onConflictDoNothing().returning({ id: endUserCompanies.endUserId })
    : await db.delete(endUserCompanies).where(and(eq(endUserCompanies.endUserId, endUserId), eq(endUserCompanies.companyId, company.id))).returning({ id: endUserCompanies.endUserId })
  return rows.length > 0
}

export function toCompanyResponse(company: CompanyRow, users: number, showRevenue: boolean) {
  return {
    id: company.id,
    external_id: company.externalId,
    name: company.name,
    mrr: showRevenue ? company.mrr : null,
    currency: company.currency,
    plan: company.plan,
    seats: company.seats,
    attributes: company.attributes,
    users,
    created_at: company.createdAt.toISOString(),
    updated_at: company.updatedAt.toISOString(),
  }
}

export const companyPage = (rows: Awaited<ReturnType<typeof listCompanies>>, page: Page, showRevenue: boolean) =>
  envelope(rows.rows.map((row) => toCompanyResponse(row.company, row.users, showRevenue)), page, rows.total)
