import { and, eq, sql } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { posts, scoreChanges, workspaces } from '../../db/schema/index.ts'
import { invalid } from '../../errors.ts'
import { recordEvent } from '../../events/outbox.ts'
import { evaluate, FormulaError, formulaSql, parseFormula, readsName, type Node } from '../../lib/formula.ts'
import { newId } from '../../lib/ids.ts'
import type { Workspace } from '../../plugins/credentials.ts'

export const MODELS = ['rice', 'value_effort', 'custom'] as const
export interface ScoringSettings { model: (typeof MODELS)[number]; formula: string | null; factors: string[] }

export const BUILT_IN_FACTORS = ['reach', 'impact', 'confidence', 'effort', 'value'] as const
export const DEMAND_NAMES = ['demand.voters', 'demand.verified_voters', 'demand.companies', 'demand.mrr', 'demand.weighted'] as const
const FORMULAS = { rice: 'reach * impact * confidence / effort', value_effort: 'value / effort' }

export function scoringSettings(workspace: Pick<Workspace, 'settings'>): ScoringSettings {
  return { model: 'rice', formula: null, factors: [], ...(workspace.settings.scoring as Partial<ScoringSettings> | undefined) }
}

const formulaText = (settings: ScoringSettings) => (settings.model === 'custom' ? settings.formula ?? '' : FORMULAS[settings.model])
const namesOf = (settings: ScoringSettings) => new Set<string>([...BUILT_IN_FACTORS, ...settings.factors, ...DEMAND_NAMES])

// Parsed trees by formula text: saved formulas were valid, so a cached parse never throws.
const parsed = new Map<string, Node>()
function treeOf(settings: ScoringSettings) {
  const key = `${[...namesOf(settings)].join(',')}|${formulaText(settings)}`
  let tree = parsed.get(key)
  if (!tree) {
    if (parsed.size > 1000) parsed.clear()
    parsed.set(key, (tree = parseFormula(formulaText(settings), namesOf(settings))))
  }
  return tree
}

// The compiled formula's parameters (migration 0053, chorus_post_score): $1 the factors, $2.. the figures.
const DEMAND_PARAMS: Record<string, string> = { 'demand.voters': '$2', 'demand.verified_voters': '$3', 'demand.companies': '$4', 'demand.mrr': '$5', 'demand.weighted': '$6' }

/** The formula as SQL when it reads `demand.*` (so that a vote must rescore), else null. */
function scoreSqlOf(settings: ScoringSettings) {
  const tree = treeOf(settings)
  if (!readsName(tree, (name) => name.startsWith('demand.'))) return null
  return formulaSql(tree, (name) => DEMAND_PARAMS[name] ?? `($1->>'${name}')::float8`)
}

export interface DemandFigures { voteCount: number; demandVerifiedVoters: number; demandCompanies: number; demandMrr: number; demandWeighted: number }

/** The score of one post: null while a factor the formula needs is unset, or where it divides by zero. */
export function scoreOf(settings: ScoringSettings, factors: Record<string, number>, demand: DemandFigures): number | null {
  const figures: Record<string, number> = {
    'demand.voters': demand.voteCount, 'demand.verified_voters': demand.demandVerifiedVoters, 'demand.companies': demand.demandCompanies,
    'demand.mrr': demand.demandMrr, 'demand.weighted': demand.demandWeighted,
  }
  const value = evaluate(treeOf(settings), (name) => (name.startsWith('demand.') ? figures[name] : factors[name]))
  return value === undefined || !Number.isFinite(value) ? null : value
}

/**
 * Saves the workspace's scoring model after parsing its formula (an unknown name, a syntax error or a
 * division by zero is 422 here, never at read time), then rescores every post of the workspace with
 * factors in the same transaction.
 */
export async function putScoring(db: Db, workspace: Workspace, input: { model: ScoringSettings['model']; formula?: string; factors?: string[] }) {
  if (input.model === 'custom' && !input.formula) throw invalid(['body', 'formula'], 'A custom model needs a formula')
  const settings: ScoringSettings = { model: input.model, formula: input.model === 'custom' ? input.formula! : null, factors: input.factors ?? [] }
  try {
    parseFormula(formulaText(settings), namesOf(settings))
  } catch (error) {
    if (error instanceof FormulaError) throw invalid(['body', 'formula'], `${error.message} (at character ${error.position + 1}). Names: ${[...namesOf(settings)].join(', ')}; functions: min, max, log`)
    throw error
  }
  const scoreSql = scoreSqlOf(settings)
  return db.transaction(async (tx) => {
    await tx.update(workspaces).set({ settings: sql`jsonb_set(${workspaces.settings}, '{scoring}', ${JSON.stringify(settings)}::jsonb)`, scoreSql, updatedAt: sql`now()` }).where(eq(workspaces.id, workspace.id))
    if (scoreSql) {
      // A formula over demand scores every post (each has demand), in SQL as the vote trigger will.
      await tx.execute(sql`update posts set score = s.score from (select id, chorus_post_score(${scoreSql}, factors, vote_count, demand_verified_voters, demand_companies, demand_mrr, demand_weighted) as score
        from posts where workspace_id = ${workspace.id}) s where posts.id = s.id and posts.score is distinct from s.score`)
      return settings
    }
    const rows = await tx.select({ id: posts.id, factors: posts.factors, score: posts.score, voteCount: posts.voteCount, demandVerifiedVoters: posts.demandVerifiedVoters,
      demandCompanies: posts.demandCompanies, demandMrr: posts.demandMrr, demandWeighted: posts.demandWeighted }).from(posts)
      .where(and(eq(posts.workspaceId, workspace.id), sql`${posts.factors} <> '{}'::jsonb`))
    for (const row of rows) {
      const score = scoreOf(settings, row.factors, row)
      if (score !== row.score) await tx.update(posts).set({ score }).where(eq(posts.id, row.id))
    }
    return settings
  })
}

type Changer = { changedByUserId?: string; changedByKeyId?: string }

/**
 * Applies a factors change to a locked post inside updatePost's transaction: merges it (null clears a
 * factor), rescores, keeps the history and raises `score.changed` when the score moves.
 */
export async function applyFactors(tx: Tx, workspaceId: string, postId: string, change: Record<string, number | null>, changer: Changer) {
  const [[workspace], [post]] = await Promise.all([
    tx.select({ settings: workspaces.settings }).from(workspaces).where(eq(workspaces.id, workspaceId)),
    tx.select().from(posts).where(eq(posts.id, postId)),
  ])
  const factors: Record<string, number> = { ...post!.factors }
  for (const [name, value] of Object.entries(change)) {
    if (value === null) delete factors[name]
    else factors[name] = value
  }
  if (Object.keys(factors).length > 20) throw invalid(['body', 'factors'], 'A post has at most 20 factors')
  const score = scoreOf(scoringSettings(workspace!), factors, post!)
  await tx.update(posts).set({ factors, score }).where(eq(posts.id, postId))
  await tx.insert(scoreChanges).values({ id: newId('scoreChange'), postId, factors, fromScore: post!.score, toScore: score, ...changer })
  return { from: post!.score, to: score }
}

export async function scoreHistory(db: Db, postId: string) {
  const rows = await db.select().from(scoreChanges).where(eq(scoreChanges.postId, postId)).orderBy(sql`${scoreChanges.createdAt} desc, ${scoreChanges.id} desc`).limit(100)
  return rows.map((row) => ({ factors: row.factors, from_score: row.fromScore, to_score: row.toScore, changed_by_user_id: row.changedByUserId, changed_by_key_id: row.changedByKeyId, created_at: row.createdAt.toISOString() }))
}

export const recordScoreChanged = (tx: Tx, workspaceId: string, post: Record<string, unknown>, from: number | null, to: number | null) =>
  recordEvent(tx, workspaceId, 'score.changed', { post, from_score: from, to_score: to })
