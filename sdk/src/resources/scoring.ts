// The workspace's scoring model and posts' score history (docs/demand.md#scores). Set a post's factors
// with `chorus.posts.update(postId, { factors: { reach: 500 } })`.
import type { ScoreHistory, Scoring, ScoringPutParams } from '../api-types.js'
import type { RequestOptions } from '../core/request.js'
import { APIResource } from './resource.js'

export class ScoringResource extends APIResource {
  /** The model in use (RICE by default), its formula and extra factor names. */
  async get(options?: RequestOptions): Promise<Scoring> {
    return this.client.call('getScoring', { ...options, path: { workspace_slug: await this.client.workspaceSlug() } })
  }

  /** `chorus.scoring.update({ model: 'custom', formula: 'reach * impact / effort + log(demand.mrr + 1)' })`: an invalid formula is a 422 ValidationError. */
  async update(params: ScoringPutParams, options?: RequestOptions): Promise<Scoring> {
    return this.client.call('putScoring', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, body: params })
  }

  /** A post's factor and score changes, newest first. */
  async history(postId: string, options?: RequestOptions): Promise<ScoreHistory> {
    return this.client.call('getScoreHistory', { ...options, path: { post_id: postId } })
  }
}
