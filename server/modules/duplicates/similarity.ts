// The similarity engine behind GET /posts/{id}/similar, the public draft form, the widget's "similar
// posts while typing" and the stored duplicate suggestions. Offline and deterministic: PostgreSQL's own
// stemming (migration 0030), pg_trgm, and the formula below. docs/duplicates.md explains it with examples.
import { sql } from 'drizzle-orm'
import { rowsOf, type Db, type Tx } from '../../db/client.ts'
import { detectLanguage, type Language } from '../../lib/language.ts'
import { documentFrequencies, inverseDocumentFrequency } from './term-counts.ts'

export interface Draft {
  title: string
  body?: string
  /** Detected from the text when absent. */
  language?: Language
  boardId?: string
  labelIds?: string[]
}

export interface Candidate {
  postId: string
  score: number
  reasons: string[]
}

/** Terms of the draft the formula weighs at most: its title's, then its body's most frequent. */
const MAX_TERMS = 40
/**
 * The full-text candidate search ORs only the draft's most selective terms (highest idf·w first): at most
 * QUERY_TERMS of them, and only while the posts holding them add up to QUERY_POSTS at most, so the search
 * reads a bounded number of posts however large the workspace (BENCHMARKS.md, "similar posts at scale").
 */
const QUERY_TERMS = 8
const QUERY_POSTS = 2000
/** Candidates from each source before re-ranking. */
const FULL_TEXT_CANDIDATES = 50
const TRIGRAM_CANDIDATES = 20
/**
 * The trigram title search (pg_trgm's `%` over every title) runs only when the full-text search found
 * fewer candidates than this: it costs what the titles sharing a trigram with the draft cost to read, the
 * most of any step at scale, and what it adds is the draft that shares no stem with anything (a typo, a
 * compound, a script the stemmer splits differently). Trigram similarity still scores every candidate.
 */
const TRIGRAM_FALLBACK_BELOW = 5
/**
 * A draft whose every term is held by more than QUERY_POSTS posts (a flood of one title) is matched against
 * the newest posts holding its most selective term, at most this many, read newest first down the
 * workspace's list index; the trigram search, which reads every similar title (GIN cannot stop early),
 * does not run for it. With 60,000 posts of one title a check took ~135 ms that way (BENCHMARKS.md).
 */
const CROWDED_CANDIDATES = FULL_TEXT_CANDIDATES

/** The weights of the formula (they sum to 1 before the board and label bonuses; the score is capped at 1). */
export const WEIGHTS = { terms: 0.45, titleTerms: 0.35, trigram: 0.2, sameBoard: 0.05, sharedLabels: 0.05 }

interface DraftTerm { lexeme: string; in_title: boolean }

interface CandidateRow {
  id: string
  board_id: string
  label_ids: string[]
  trigram: number
  title_terms: string[]
  /** The draft's terms the candidate holds (matched in PostgreSQL: a long post's every lexeme never crosses the wire). */
  shared: string[]
}

type Scope = {
  /** The draft's own post: left out of the candidates, and its stored search document (the same text) gives the draft's terms. */
  excludeId?: string
  publicOnly?: boolean
  olderOnly?: boolean
}

/** One draft to rank candidates for, with where to look. */
export interface SimilarQuery { draft: Draft; scope?: Scope & { limit?: number } }

/**
 * Each draft's terms as the posts' search documents hold them (title terms first, then the most frequent), at
 * most MAX_TERMS, in one statement for all. A draft that is a stored post reads its stored document; only a
 * draft still being typed is run through the text search configuration.
 */
async function draftTerms(db: Db | Tx, drafts: { draft: Draft; language: Language; ownId?: string }[]) {
  const column = <T>(pick: (item: (typeof drafts)[number]) => T) => sql.param(drafts.map(pick))
  const computed = sql`chorus_search_document(d.language, d.title, d.body)`
  // Drafts still being typed never look in posts (a statement that does is planned against all its indexes).
  const document = drafts.some((item) => item.ownId) ? sql`coalesce((select p.search from posts p where p.id = nullif(d.own_id, '')), ${computed})` : computed
  const rows = rowsOf<DraftTerm & { i: number }>(await db.execute(sql`
    select d.i::int as i, t.lexeme, t.in_title
    from unnest(${column((item) => item.draft.title)}::text[], ${column((item) => item.draft.body ?? '')}::text[], ${column((item) => item.language)}::text[],
      ${column((item) => item.ownId ?? '')}::text[]) with ordinality d(title, body, language, own_id, i)
    cross join lateral (
      select u.lexeme, 'A' = any(u.weights) as in_title,
        row_number() over (order by 'A' = any(u.weights) desc, coalesce(array_length(u.positions, 1), 1) desc, u.lexeme) as rank
      from unnest(${document}) u) t
    where t.rank <= ${MAX_TERMS}
    order by d.i, t.rank`))
  const terms: DraftTerm[][] = drafts.map(() => [])
  for (const row of rows) terms[row.i - 1]!.push({ lexeme: row.lexeme, in_title: row.in_title })
  return terms
}

/** A lexeme as a tsquery operand (quotes doubled, backslashes escaped). */
const operand = (lexeme: string) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`

/**
 * The full-text candidates (posts holding any of the chosen terms, ranked by the idf of the terms they
 * hold, then id) and, when those are few, the trigram candidates (titles pg_trgm finds similar, `%`),
 * with what the re-ranking needs of each. A crowded draft (no term fits QUERY_POSTS) gets the newest posts
 * holding its most selective term instead, and no trigram search.
 */
async function candidates(db: Db | Tx, workspaceId: string, draft: Draft, { query, crowded, terms }: Pick<SearchPlan, 'query' | 'crowded' | 'terms'>, options: Scope) {
  const visible = sql`p.workspace_id = ${workspaceId} and p.merged_into_id is null and p.id <> ${options.excludeId ?? ''}
    ${options.olderOnly && options.excludeId ? sql`and (p.created_at, p.id) < (select o.created_at, o.id from posts o where o.id = ${options.excludeId})` : sql``}
    ${options.publicOnly ? sql`and p.moderation is null and p.board_id in (select b.id from boards b where b.workspace_id = ${workspaceId} and not b.is_private)` : sql``}`
  const operands = query.map((term) => operand(term.lexeme))
  const byText = query.length ? sql`select p.id from posts p where ${visible} and p.search @@ ${operands.join(' | ')}::tsquery
      order by (select sum(x.w) from unnest(${sql.param(operands)}::tsquery[], ${sql.param(query.map((term) => term.weight))}::float8[]) x(q, w) where p.search @@ x.q) desc, p.id
      limit ${FULL_TEXT_CANDIDATES}`
    // ts_match_vq is `@@` the GIN index cannot serve: the walk down the workspace's newest-first index stops at
    // the 50th match. Given `@@`, a planner whose statistics predate a burst of one title read every post of it
    // through the GIN index and sorted them (24,000 posts, 12 ms a check; BENCHMARKS.md).
    : crowded ? sql`select p.id from posts p where ${visible} and ts_match_vq(p.search, ${operand(crowded)}::tsquery)
      order by p.created_at desc, p.id desc limit ${CROWDED_CANDIDATES}`
    : sql`select null::text as id where false`
  return rowsOf<CandidateRow>(await db.execute(sql`
    with by_text as (${byText}),
    by_title as (select p.id from posts p where ${crowded ? sql`false` : sql`(select count(*) from by_text) < ${TRIGRAM_FALLBACK_BELOW}`} and ${visible}
      and p.title % ${draft.title} order by similarity(p.title, ${draft.title}) desc, p.id limit ${TRIGRAM_CANDIDATES})
    select p.id, p.board_id, p.label_ids, similarity(p.title, ${draft.title})::float8 as trigram,
      array(select u.lexeme from unnest(p.search) u where 'A' = any(u.weights)) as title_terms,
      array(select x.term from unnest(${sql.param(terms.map(operand))}::tsquery[], ${sql.param(terms)}::text[]) x(query, term) where p.search @@ x.query) as shared
    from posts p where p.id in (select id from by_text union select id from by_title)`))
}

export interface SearchPlan {
  terms: string[]
  draftTitle: Set<string>
  idf: Map<string, number>
  posts: number
  /** The terms the full-text candidate search ORs, with their weights. */
  query: { lexeme: string; weight: number }[]
  /** When no term fits QUERY_POSTS but some were left out for holding too many posts: the most selective of those (CROWDED_CANDIDATES). */
  crowded: string | null
}

/**
 * Each draft's terms (lexemes, title terms first) with their idf, and the few the full-text candidate search
 * ORs: the most selective first (highest idf·w), at most QUERY_TERMS reaching at most QUERY_POSTS posts. The
 * terms of all the drafts are read in one statement and their document frequencies in another.
 */
export async function planSearches(db: Db | Tx, workspaceId: string, queries: SimilarQuery[]): Promise<SearchPlan[]> {
  const found = await draftTerms(db, queries.map(({ draft, scope }) => ({
    draft, language: draft.language ?? detectLanguage(`${draft.title}\n${draft.body ?? ''}`), ownId: scope?.excludeId,
  })))
  const known = await documentFrequencies(db, workspaceId, [...new Set(found.flat().map((term) => term.lexeme))].sort())
  return queries.map(({ scope }, i) => {
    const draftTitle = new Set(found[i]!.filter((term) => term.in_title).map((term) => term.lexeme))
    const terms = found[i]!.map((term) => term.lexeme)
    const idf = new Map(terms.map((term) => [term, inverseDocumentFrequency(known.df.get(term) ?? 0, known.posts)]))
    const weight = (term: string) => (idf.get(term) ?? 0) * (draftTitle.has(term) ? 2 : 1)
    // A post's own terms count it once: a term only it holds finds nothing else.
    const alone = scope?.excludeId ? 1 : 0
    const query: { lexeme: string; weight: number }[] = []
    let reach = 0
    let crowded: string | null = null
    for (const term of [...terms].sort((a, b) => weight(b) - weight(a) || (a < b ? -1 : 1))) {
      const df = known.df.get(term) ?? 0
      if (query.length === QUERY_TERMS) break
      if (df <= alone) continue
      if (reach + df > QUERY_POSTS) {
        crowded ??= term
        continue
      }
      query.push({ lexeme: term, weight: weight(term) })
      reach += df
    }
    return { terms, draftTitle, idf, posts: known.posts, query, crowded: query.length ? null : crowded }
  })
}

/** One draft's plan (planSearches). */
export const planSearch = async (db: Db | Tx, workspaceId: string, draft: Draft, options: Scope = {}) => (await planSearches(db, workspaceId, [{ draft, scope: options }]))[0]!

const sum = (terms: Iterable<string>, idf: (term: string) => number) => {
  let total = 0
  for (const term of terms) total += idf(term)
  return total
}
const round = (value: number) => Math.round(value * 1000) / 1000

/**
 * Ranked candidates for a draft (or a post, with `excludeId` its own id):
 *   terms      = Σ idf·w over the draft's terms the candidate shares / Σ idf·w over all the draft's terms,
 *                w = 2 for a term of the draft's title, else 1 (how much of what the draft says the candidate says)
 *   titleTerms = Σ idf over the terms both titles share / Σ idf over the terms of either title (weighted Jaccard)
 *   trigram    = pg_trgm similarity of the two titles (spelling variants, compounds, CJK character runs)
 *   score      = 0.45·terms + 0.35·titleTerms + 0.20·trigram (+0.05 same board, +0.05 a shared label), at most 1,
 * ties broken by post id, so the same data gives the same answer.
 */
export async function similarPosts(db: Db | Tx, workspaceId: string, draft: Draft, options: Scope & { limit?: number } = {}): Promise<Candidate[]> {
  return (await similarPostsMany(db, workspaceId, [{ draft, scope: options }]))[0]!
}

/**
 * similarPosts for several drafts of one workspace (the suggester's batch of new posts): the drafts' terms,
 * their document frequencies and the candidates' title terms are each read once for all of them; only the
 * candidate search runs per draft. The answers are the ones each draft gets alone.
 */
export async function similarPostsMany(db: Db | Tx, workspaceId: string, queries: SimilarQuery[]): Promise<Candidate[][]> {
  const plans = await planSearches(db, workspaceId, queries)
  const found: CandidateRow[][] = []
  for (const [i, { draft, scope }] of queries.entries()) found.push(await candidates(db, workspaceId, draft, plans[i]!, scope ?? {}))
  // The idf of the candidates' title terms the drafts do not hold, in one read for all of them.
  const missing = new Set<string>()
  found.forEach((rows, i) => rows.forEach((row) => row.title_terms.forEach((term) => plans[i]!.idf.has(term) || missing.add(term))))
  // One map for the batch (its drafts share N): copying it into each draft's plan cost ~1.4 ms a check.
  const titleIdf = new Map<string, number>()
  if (missing.size) {
    const more = await documentFrequencies(db, workspaceId, [...missing].sort())
    for (const term of missing) titleIdf.set(term, inverseDocumentFrequency(more.df.get(term) ?? 0, plans[0]!.posts))
  }
  return queries.map(({ draft, scope }, i) => rank(draft, plans[i]!, found[i]!, titleIdf, scope?.limit ?? 5))
}

function rank(draft: Draft, { terms, draftTitle, idf: draftIdf }: SearchPlan, rows: CandidateRow[], titleIdf: Map<string, number>, limit: number): Candidate[] {
  if (!rows.length) return []
  const idf = (term: string) => draftIdf.get(term) ?? titleIdf.get(term) ?? 0
  const weight = (term: string) => idf(term) * (draftTitle.has(term) ? 2 : 1)
  const draftMass = terms.reduce((total, term) => total + weight(term), 0)

  const ranked = rows.map((row) => {
    const held = new Set(row.shared)
    const shared = terms.filter((term) => held.has(term))
    const termScore = draftMass > 0 ? shared.reduce((total, term) => total + weight(term), 0) / draftMass : 0
    const titleTerms = new Set(row.title_terms)
    const titleUnion = new Set([...draftTitle, ...titleTerms])
    const titleShared = [...draftTitle].filter((term) => titleTerms.has(term))
    const unionMass = sum(titleUnion, idf)
    const titleScore = unionMass > 0 ? sum(titleShared, idf) / unionMass : 0
    const sameBoard = draft.boardId !== undefined && draft.boardId === row.board_id
    const sharedLabels = (draft.labelIds ?? []).filter((label) => row.label_ids.includes(label))
    const score = Math.min(1, WEIGHTS.terms * termScore + WEIGHTS.titleTerms * titleScore + WEIGHTS.trigram * row.trigram
      + (sameBoard ? WEIGHTS.sameBoard : 0) + (sharedLabels.length ? WEIGHTS.sharedLabels : 0))
    const reasons: string[] = []
    const strongest = [...shared].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b)).slice(0, 5)
    if (strongest.length) reasons.push(`shared terms: ${strongest.join(', ')}`)
    if (row.trigram >= 0.3) reasons.push(`similar title (${round(row.trigram)})`)
    if (sameBoard) reasons.push('same board')
    if (sharedLabels.length) reasons.push(`shared labels: ${sharedLabels.length}`)
    return { postId: row.id, score: round(score), reasons }
  })
  return ranked.sort((a, b) => b.score - a.score || (a.postId < b.postId ? -1 : 1)).slice(0, limit)
}
