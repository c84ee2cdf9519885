// Boards, statuses and labels: what posts are filed under. Board and status writes are dashboard-only.
import type { Board, LabelCreateParams, LabelUpdateParams, Result } from '../api-types.js'
import type { RequestOptions, WithResponse } from '../core/request.js'
import { APIResource } from './resource.js'

export class Boards extends APIResource {
  list(options?: RequestOptions): Promise<Result<'listBoards'>> {
    return this.client.call('listBoards', options)
  }

  get(boardSlug: string, options?: RequestOptions): Promise<WithResponse<Board>> {
    return this.client.call('getBoard', { ...options, path: { board_slug: boardSlug } })
  }
}

export class Statuses extends APIResource {
  list(options?: RequestOptions): Promise<Result<'listStatuses'>> {
    return this.client.call('listStatuses', options)
  }
}

export class Labels extends APIResource {
  list(options?: RequestOptions): Promise<Result<'listLabels'>> {
    return this.client.call('listLabels', options)
  }

  create(params: LabelCreateParams, options?: RequestOptions): Promise<Result<'createLabel'>> {
    return this.client.call('createLabel', { ...options, body: params })
  }

  update(labelId: string, params: LabelUpdateParams, options?: RequestOptions): Promise<Result<'updateLabel'>> {
    return this.client.call('updateLabel', { ...options, path: { label_id: labelId }, body: params })
  }

  delete(labelId: string, options?: RequestOptions): Promise<void> {
    return this.client.call('deleteLabel', { ...options, path: { label_id: labelId } }).then(() => undefined)
  }
}
