// The similarity engine behind GET /posts/{id}/similar, the public draft form, the widget's "similar
// posts while typing" and the stored duplicate suggestions. Offline and deterministic: PostgreSQL's own
// stemming (migration 0030), pg_trgm, and the formula below. docs/duplicates.md explains it with examples.
import { sql } from 'drizzle-orm'
import { rowsOf, type Db, type Tx } from '../../db/client.ts'
import { detectLanguage, type Language } from '../../lib/language.ts'

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

/** Terms of the draft looked up at most: its title's, then its body's most frequent. */
const MAX_TERMS = 40
/** Candidates from each source before re-ranking. */
const FULL_TEXT_CANDIDATES = 50
const TRIGRAM_CANDIDATES = 20
/** Document frequencies are counted up to this many posts: a term that common weighs the floor's idf anyway. */
const DF_CAP = 1000

/** The weights of the formula (they sum to 1 before the board and label bonuses; the score is capped at 1). */
export const WEIGHTS = { terms: 0.45, titleTerms: 0.35, trigram: 0.2, sameBoard: 0.05, sharedLabels: 0.05 }

interface CandidateRow {
  id: string
  board_id: string
  label_ids: string[]
  trigram: number
  title_terms: string[]
  terms: string[]
  draft_terms: string[]
  draft_title_terms: string[]
}

/** A lexeme as a tsquery operand; lexemes with a quote or backslash are left out of the lookups (the parser hardly makes them). */
const quotable = (lexeme: string) => !/['\\]/.test(lexeme)

/**
 * The full-text candidates (posts sharing any of the draft's weightiest terms, best ts_rank first) and
 * the trigram candidates (titles pg_trgm finds similar, `%`), with what the re-ranking needs of each.
 */
async function candidates(db: Db | Tx, workspaceId: string, draft: Draft, language: Language, options: { excludeId?: string; publicOnly?: boolean; olderOnly?: boolean }) {
  const visible = sql`p.workspace_id = ${workspaceId} and p.merged_into_id is null and p.id <> ${options.excludeId ?? ''}
    ${options.olderOnly && options.excludeId ? sql`and (p.created_at, p.id) < (select o.created_at, o.id from posts o where o.id = ${options.excludeId})` : sql``}
    ${options.publicOnly ? sql`and p.moderation is null and p.board_id in (select b.id from boards b where b.workspace_id = ${workspaceId} and not b.is_private)` : sql``}`
  return rowsOf<CandidateRow>(await db.execute(sql`
    with draft_terms as (
      select u.lexeme, 'A' = any(u.weights) as in_title, coalesce(array_length(u.positions, 1), 1) as tf
      from unnest(chorus_search_document(${language}, ${draft.title}, ${draft.body ?? ''})) u where u.lexeme !~ '[''\\\\]'
      order by 2 desc, 3 desc, 1 limit ${MAX_TERMS}
    ), q as (select coalesce(string_agg('''' || lexeme || '''', ' | '), '')::tsquery as q from draft_terms),
    by_text as (select p.id from posts p, q where ${visible} and p.search @@ q.q order by ts_rank(p.search, q.q) desc, p.id limit ${FULL_TEXT_CANDIDATES}),
    by_title as (select p.id from posts p where ${visible} and p.title % ${draft.title} order by similarity(p.title, ${draft.title}) desc, p.id limit ${TRIGRAM_CANDIDATES})
    select p.id, p.board_id, p.label_ids, similarity(p.title, ${draft.title})::float8 as trigram,
      array(select u.lexeme from unnest(p.search) u where 'A' = any(u.weights)) as title_terms,
      tsvector_to_array(p.search) as terms,
      array(select lexeme from draft_terms) as draft_terms,
      array(select lexeme from draft_terms where in_title) as draft_title_terms
    from posts p where p.id in (select id from by_text union select id from by_title)`))
}

/** BM25's idf per term, from the number of posts containing it (counted up to DF_CAP) among the workspace's unmerged posts. */
async function inverseDocumentFrequencies(db: Db | Tx, workspaceId: string, terms: string[]) {
  const rows = rowsOf<{ term: string; df: number; n: number }>(await db.execute(sql`
    select t as term, (select count(*) from (select 1 from posts p where p.workspace_id = ${workspaceId} and p.merged_into_id is null
        and p.search @@ ('''' || t || '''')::tsquery limit ${DF_CAP}) c)::int as df,
      (select coalesce(sum(c.posts), 0) from board_post_counts c join boards b on b.id = c.board_id where b.workspace_id = ${workspaceId})::int as n
    from unnest(${sql.param(terms)}::text[]) t`))
  const n = Math.max(rows[0]?.n ?? 1, 1)
  return new Map(rows.map((row) => [row.term, Math.log(1 + (n - row.df + 0.5) / (row.df + 0.5))]))
}

const sum = (terms: Iterable<string>, idf: Map<string, number>) => {
  let total = 0
  for (const term of terms) total += idf.get(term) ?? 0
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
export async function similarPosts(db: Db | Tx, workspaceId: string, draft: Draft, options: { excludeId?: string; publicOnly?: boolean; limit?: number; /** Only posts created before `excludeId`'s (the suggestion step: a new post repeats an older one). */ olderOnly?: boolean } = {}): Promise<Candidate[]> {
  const language = draft.language ?? detectLanguage(`${draft.title}\n${draft.body ?? ''}`)
  const rows = await candidates(db, workspaceId, draft, language, options)
  if (!rows.length) return []
  const draftTerms = rows[0]!.draft_terms
  const draftTitle = new Set(rows[0]!.draft_title_terms)
  const lookup = new Set([...draftTerms, ...rows.flatMap((row) => row.title_terms)].filter(quotable))
  const idf = await inverseDocumentFrequencies(db, workspaceId, [...lookup].sort())
  const weight = (term: string) => (idf.get(term) ?? 0) * (draftTitle.has(term) ? 2 : 1)
  const draftMass = draftTerms.reduce((total, term) => total + weight(term), 0)

  const ranked = rows.map((row) => {
    const terms = new Set(row.terms)
    const shared = draftTerms.filter((term) => terms.has(term))
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
  return ranked.sort((a, b) => b.score - a.score || (a.postId < b.postId ? -1 : 1)).slice(0, options.limit ?? 5)
}
