// Imports from other feedback tools (docs/import.md): the file is sent as the request body, the job runs
// in the background; `wait` polls it to its end. Needs the imports:write scope.
import type { Result } from '../api-types.js'
import type { RequestOptions } from '../core/request.js'
import { APIResource } from './resource.js'

export type ImportFormat = 'csv' | 'fider' | 'canny'
export interface ImportCreateParams {
  format: ImportFormat
  /** The file: its text, bytes or a Blob (a CSV posts file, a Fider backup object, Canny's objects). */
  file: Blob | ArrayBuffer | Uint8Array | string
  /** Board for posts that name none. */
  board?: string
}

const contentType = (format: ImportFormat) => (format === 'csv' ? 'text/csv' : 'application/json')

export class Imports extends APIResource {
  /** Queues an import (202): `await chorus.imports.create({ format: 'canny', file: await Bun.file('canny.json').text() })`. */
  async create(params: ImportCreateParams, options?: RequestOptions): Promise<Result<'getImport'>> {
    const query = { format: params.format, ...(params.board ? { board: params.board } : {}) }
    return this.client.call('createImport', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, query, file: { data: params.file, contentType: contentType(params.format) } }) as Promise<Result<'getImport'>>
  }

  /** What the import would create, merge and skip, with row errors; writes nothing. */
  async plan(params: ImportCreateParams, options?: RequestOptions) {
    const query = { format: params.format, dry_run: 'true' as const, ...(params.board ? { board: params.board } : {}) }
    return this.client.call('createImport', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, query, file: { data: params.file, contentType: contentType(params.format) } })
  }

  /** Status, counts, errors and progress. */
  async get(importId: string, options?: RequestOptions): Promise<Result<'getImport'>> {
    return this.client.call('getImport', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), import_id: importId } })
  }

  async list(options?: RequestOptions): Promise<Result<'listImports'>> {
    return this.client.call('listImports', { ...options, path: { workspace_slug: await this.client.workspaceSlug() } })
  }

  /** Polls until the import is completed or failed (every `intervalMs`, default 1 s). */
  async wait(importId: string, intervalMs = 1000, options?: RequestOptions): Promise<Result<'getImport'>> {
    for (;;) {
      const current = await this.get(importId, options)
      if (current.status === 'completed' || current.status === 'failed') return current
      await new Promise((resolve) => setTimeout(resolve, intervalMs))
    }
  }
}
