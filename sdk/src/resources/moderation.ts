// Moderation (docs/moderation.md): the held queue and blocked writers. What is held is `settings.moderation`
// (chorus.workspaces.update); the queue needs posts:read, deciding posts:write, blocks an admin's key.
import type { Block, BlockCreateParams, HeldPost, Post, Result } from '../api-types.js'
import { PagePromise, type Page } from '../core/pagination.js'
import type { RequestOptions, WithResponse } from '../core/request.js'
import { APIResource } from './resource.js'

export class Moderation extends APIResource {
  /** `for await (const { post, score, reasons } of chorus.moderation.list())` walks every held post, newest first. */
  list(query: { page?: number; per_page?: number } = {}, options?: RequestOptions): PagePromise<HeldPost> {
    return new PagePromise(async (page) => {
      const path = { workspace_slug: await this.client.workspaceSlug() }
      return this.client.call('listHeldPosts', { ...options, path, query: { ...query, page } }) as Promise<WithResponse<Page<HeldPost>>>
    }, query.page ?? 1)
  }

  /** Publishes a held post: only now are its webhooks, chat messages and notifications sent. */
  async approve(postId: string, options?: RequestOptions): Promise<Post> {
    return this.client.call('approveHeldPost', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), post_id: postId } })
  }

  /** Deletes a held post for good (no event is raised). */
  async reject(postId: string, options?: RequestOptions): Promise<Result<'rejectHeldPost'>> {
    return this.client.call('rejectHeldPost', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), post_id: postId } })
  }

  /** `chorus.moderation.listBlocks()`: each block with a hint, never the value (it is stored hashed). */
  async listBlocks(query: { page?: number; per_page?: number } = {}, options?: RequestOptions): Promise<Result<'listBlocks'>> {
    return this.client.call('listBlocks', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, query })
  }

  /** `chorus.moderation.block({ kind: 'domain', value: 'spam.example' })`: their writes then fail with 403 WRITER_BLOCKED. */
  async block(params: BlockCreateParams, options?: RequestOptions): Promise<Block> {
    return this.client.call('createBlock', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, body: params })
  }

  async unblock(blockId: string, options?: RequestOptions): Promise<void> {
    await this.client.call('deleteBlock', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), block_id: blockId } })
  }
}
