import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { Enum, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { findPost } from '../feedback/lookups.ts'
import { PostIdParams } from '../posts/model.ts'
import { MODELS, putScoring, scoreHistory, scoringSettings } from './service.ts'

const tags = ['Scoring']
const FactorName = t.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' })
const Scoring = t.Object({
  model: Enum(MODELS, { description: '`rice`: reach × impact × confidence / effort; `value_effort`: value / effort; `custom`: `formula`' }),
  formula: t.Nullable(t.String({ maxLength: 500, description: 'Custom model only: numbers, factor names, `demand.voters|verified_voters|companies|mrr|weighted`, + - * /, min(…), max(…), log(…) (natural), parentheses' })),
  factors: t.Array(FactorName, { maxItems: 20, description: 'Factor names a custom formula may use besides reach, impact, confidence, effort and value' }),
}, { $id: 'Scoring', examples: [{ model: 'custom', formula: 'reach * impact * confidence / effort + log(demand.mrr / 100 + 1)', factors: [] }] })
const ScoringPut = t.Object({
  model: Scoring.properties.model,
  formula: t.Optional(t.String({ minLength: 1, maxLength: 500 })),
  factors: t.Optional(t.Array(FactorName, { maxItems: 20, uniqueItems: true })),
}, { additionalProperties: false, $id: 'ScoringPut', examples: [{ model: 'rice' }] })
const ScoreChange = t.Object({
  factors: t.Record(t.String(), t.Number()), from_score: t.Nullable(t.Number()), to_score: t.Nullable(t.Number()),
  changed_by_user_id: t.Nullable(t.String()), changed_by_key_id: t.Nullable(t.String()), created_at: Timestamp,
}, { $id: 'ScoreChange', examples: [{ factors: { reach: 500, impact: 2, confidence: 0.8, effort: 3 }, from_score: null, to_score: 266.67, changed_by_user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', changed_by_key_id: null, created_at: '2026-11-28T09:30:00.000Z' }] })
const ScoreHistory = t.Object({ items: t.Array(ScoreChange) }, { $id: 'ScoreHistory', examples: [{ items: [{ factors: { reach: 500, impact: 2, confidence: 0.8, effort: 3 }, from_score: null, to_score: 266.67, changed_by_user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', changed_by_key_id: null, created_at: '2026-11-28T09:30:00.000Z' }] }] })

/** Per-workspace scoring (docs/demand.md#scores): staff only, never public. */
export const scoringModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/workspaces/:workspace_slug/scoring', ({ workspace }) => scoringSettings(workspace), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'posts:read' },
      response: { 200: Scoring },
      detail: { operationId: 'getScoring', tags, summary: "The workspace's scoring model", description: 'Default: RICE.' },
    })
    .put('/workspaces/:workspace_slug/scoring', ({ workspace, body }) => putScoring(ctx.db, workspace, body), {
      params: WorkspaceSlugParams,
      body: ScoringPut,
      workspace: { scope: 'posts:write', role: 'admin' },
      response: { 200: Scoring },
      detail: { operationId: 'putScoring', tags, summary: 'Choose the scoring model (admin)', description: 'The formula is parsed when saved by a small evaluator (no code runs): an unknown name or function, a syntax error or a division by a constant zero is 422 here and nothing is saved. Saving rescores every post with factors (every post, for a formula over `demand.*`, which votes, merges and company changes then keep current) in the same transaction (no `score.changed` events for a model change).' },
    })
    .get('/posts/:post_id/score-history', async ({ workspace, params }) => {
      await findPost(ctx.db, workspace.id, params.post_id)
      return { items: await scoreHistory(ctx.db, params.post_id) }
    }, {
      params: PostIdParams,
      workspace: { scope: 'posts:read' },
      response: { 200: ScoreHistory },
      detail: { operationId: 'getScoreHistory', tags, summary: "A post's factor and score changes, newest first", description: 'The last 100 changes made through `PATCH /posts/{post_id}` with `factors`.' },
    })
