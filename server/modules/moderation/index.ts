import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { readPage } from '../../lib/paging.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { PostResponse } from '../posts/model.ts'
import { createBlock, deleteBlock, listBlocks } from './blocks.ts'
import { BlockCreate, BlockDeleted, BlockPage, BlockParams, BlockResponse, HeldListQuery, HeldPage, ModerationPostParams, RejectedResponse } from './model.ts'
import { approvePost, listHeld, rejectPost } from './service.ts'

const tags = ['Moderation']
const HOLDING = 'What is held follows `settings.moderation` (PATCH /workspaces/{workspace_slug}): `off` (default) holds nothing, `suspicious` holds anonymous and unconfirmed end-user writes whose spam score reaches 5, `anonymous` holds every such write. Identified (JWT) and confirmed end users, members and API keys are never held (docs/moderation.md).'

export const moderationModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug/moderation' })
    .use(authPlugin(ctx))
    .get('', ({ workspace, query }) => listHeld(ctx.db, workspace.id, readPage(query)), {
      params: WorkspaceSlugParams,
      query: HeldListQuery,
      workspace: { scope: 'posts:read' },
      response: { 200: HeldPage },
      detail: { operationId: 'listHeldPosts', tags, summary: 'Posts held for review, newest first', description: `Each held post as the team sees it (\`moderation: "held"\`) with the spam score and the rules that held it. A held post is on no public read (board lists, the post page, search, similar, roadmap, counts) and has raised no event. ${HOLDING}` },
    })
    .post('/:post_id/approve', ({ workspace, params }) => approvePost(ctx.db, workspace.id, params.post_id), {
      params: ModerationPostParams,
      workspace: { scope: 'posts:write' },
      response: { 200: PostResponse },
      detail: { operationId: 'approveHeldPost', tags, summary: 'Approve: publish a held post', description: 'The post joins its board, its counts and every public read, and only now raises `post.created` (and `vote.created` for its author\'s vote): webhooks, chat messages and notifications go out once, at approval. A post that is not held (already published) is 409; one of another workspace is 404.' },
    })
    .post('/:post_id/reject', ({ workspace, params }) => rejectPost(ctx.db, workspace.id, params.post_id), {
      params: ModerationPostParams,
      workspace: { scope: 'posts:write' },
      response: { 200: RejectedResponse },
      detail: { operationId: 'rejectHeldPost', tags, summary: 'Reject: delete a held post for good', description: 'Deletes the post with its votes and comments. No event is raised (none ever announced the post) and the author is not told. To keep the writer out, add a block. A post that is not held is 409 (delete a published post with DELETE /posts/{post_id}); one of another workspace is 404.' },
    })
    .get('/blocks', ({ workspace, query }) => listBlocks(ctx.db, workspace.id, readPage(query)), {
      params: WorkspaceSlugParams,
      query: HeldListQuery,
      workspace: { scope: 'posts:read', role: 'admin' },
      response: { 200: BlockPage },
      detail: { operationId: 'listBlocks', tags, summary: 'Blocked addresses, domains and IPs, newest first', description: 'Each block with a `hint` (the value is kept only as an HMAC, so it cannot be shown). Admins and the owner, or a key with posts:read.' },
    })
    .post('/blocks', async ({ workspace, body, set }) => {
      const block = await createBlock(ctx.db, ctx.secrets, workspace.id, body)
      set.status = 201
      return block
    }, {
      params: WorkspaceSlugParams,
      body: BlockCreate,
      workspace: { scope: 'posts:write', role: 'admin' },
      response: { 201: BlockResponse },
      detail: { operationId: 'createBlock', tags, summary: 'Block an e-mail address, a domain or an IP', description: 'From now on every end-user post and comment from it (widget, portal, public API; identified users included) is refused with 403 `WRITER_BLOCKED`: a clear answer rather than a silent hold, so a person blocked by mistake knows to write to the team. The value is stored only as an HMAC-SHA-256 under a key derived from SECRET_KEY. A value already blocked is 409; a malformed one 422. Admins and the owner, or a key with posts:write.' },
    })
    .delete('/blocks/:block_id', ({ workspace, params }) => deleteBlock(ctx.db, workspace.id, params.block_id), {
      params: BlockParams,
      workspace: { scope: 'posts:write', role: 'admin' },
      response: { 200: BlockDeleted },
      detail: { operationId: 'deleteBlock', tags, summary: 'Lift a block', description: 'The address, domain or IP may write again. A block of another workspace is 404.' },
    })
