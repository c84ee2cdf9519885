// The MCP tools: each is a thin call into the same service its REST twin uses, with that twin's scope.
// Results are compact JSON (what an assistant needs to answer and to chain the next call) with a link
// to the post's public page.
import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import { z } from 'zod'
import type { AppContext } from '../../context.ts'
import { posts } from '../../db/schema/index.ts'
import type { BearerResolved, Scope } from '../../plugins/auth.ts'
import { listBoards } from '../boards/service.ts'
import { toBoardResponse } from '../boards/model.ts'
import { createComment } from '../comments/service.ts'
import { readPage } from '../../lib/paging.ts'
import { findPosts, getPost, listPosts } from '../posts/queries.ts'
import { createPost, mergePost, updatePost } from '../posts/service.ts'
import { toggleVote } from '../votes/service.ts'
import { portalPostUrl } from '../portal/links.ts'
import { invalid } from '../../errors.ts'
import { findPost } from '../feedback/lookups.ts'
import { languageOfTag } from '../../lib/language.ts'
import { similarItems } from '../duplicates/service.ts'
import { similarPosts } from '../duplicates/similarity.ts'

type Post = Awaited<ReturnType<typeof getPost>>

export interface Tool {
  name: string
  title: string
  description: string
  scope: Scope
  write: boolean
  input: z.ZodRawShape
  run(ctx: AppContext, resolved: BearerResolved, args: any): Promise<unknown>
}

const postId = z.string().min(1).max(64).describe('A post id (post_...), as returned by search_posts')
const email = z.string().email().max(254)
const labels = z.array(z.string().min(1).max(48)).max(20).describe('Label slugs; the post gets exactly these')

const postUrl = (ctx: AppContext, resolved: BearerResolved, id: string) => portalPostUrl(ctx.config.baseUrl, resolved.workspace.slug, id)

/** A post without the fields an assistant rarely needs; `body` cut to `bodyChars` in lists. */
function compact(ctx: AppContext, resolved: BearerResolved, post: Post, bodyChars?: number) {
  const body = bodyChars !== undefined && post.body.length > bodyChars ? `${post.body.slice(0, bodyChars)}…` : post.body
  return {
    id: post.id,
    title: post.title,
    body,
    board: post.board,
    status: post.status,
    labels: post.labels,
    votes: post.votes,
    comments: post.comment_count,
    author: post.author.name,
    merged_into: post.merged_into,
    created_at: post.created_at,
    url: postUrl(ctx, resolved, post.id),
    // Revenue is company data: only with companies:read (docs/demand.md).
    demand: post.demand && (resolved.caller.scopes.includes('companies:read') ? post.demand : { ...post.demand, mrr: null }),
    score: post.score,
  }
}

export const TOOLS: Tool[] = [
  {
    name: 'list_boards',
    title: 'List feedback boards',
    description: 'Lists the feedback boards of the workspace (slug, name, description, whether private, number of posts). Call it first to learn the board slugs that search_posts and create_post take.',
    scope: 'boards:read',
    write: false,
    input: {},
    async run(ctx, resolved) {
      return (await listBoards(ctx.db, resolved.workspace.id)).map(toBoardResponse).map(({ slug, name, description, is_private, post_count }) => ({ slug, name, description, is_private, post_count }))
    },
  },
  {
    name: 'search_posts',
    title: 'Search feedback posts',
    description: 'Finds feedback posts (feature requests, bug reports) by full-text query, optionally within one board and filtered by status or label, sorted by newest, most votes or trending. Use it to check whether a request already exists before creating one, or to find post ids. Merged duplicates are left out; bodies are shortened (get_post has the full text).',
    scope: 'posts:read',
    write: false,
    input: {
      query: z.string().min(1).max(200).optional().describe('Words to look for in title and body (web-search syntax: "exact phrase", -exclude, or)'),
      board: z.string().min(1).max(64).optional().describe('Board slug (from list_boards); all boards when omitted'),
      status: z.string().min(1).max(64).optional().describe('Status name such as "planned" or "in progress"; needs board'),
      label: z.string().min(1).max(48).optional().describe('Label slug; needs board'),
      sort: z.enum(['new', 'top', 'trending']).optional().describe('new (default; best match first when query is given), top (most votes), trending'),
      limit: z.number().int().min(1).max(50).optional().describe('Posts to return, 10 by default'),
    },
    async run(ctx, resolved, args) {
      const { workspace } = resolved
      const limit = args.limit ?? 10
      let items: Post[]
      if (args.board !== undefined) {
        const page = await listPosts(ctx.db, { workspace, board: args.board }, { status: args.status, label: args.label, q: args.query, sort: args.sort }, readPage({ per_page: limit }), false, 'arguments')
        items = page.items
      } else {
        const query = args.query !== undefined ? sql`(select chorus_search_query(${args.query}))` : undefined
        const where = and(eq(posts.workspaceId, workspace.id), isNull(posts.mergedIntoId), query ? sql`${posts.search} @@ ${query}` : undefined)
        const order = args.sort === 'top' ? [desc(posts.voteCount), desc(posts.createdAt)] : query && !args.sort ? [desc(sql`ts_rank(${posts.search}, ${query})`)] : [desc(posts.createdAt)]
        items = await findPosts(ctx.db, where, order, limit)
      }
      return { posts: items.map((post) => compact(ctx, resolved, post, 280)) }
    },
  },
  {
    name: 'find_duplicates',
    title: 'Find duplicates of a post or a draft',
    description: 'Ranks existing posts that ask for the same thing as a post (post_id) or a draft (title, optional body), in any language the board speaks, each with a score from 0 to 1 and the reasons (shared terms, similar title, same board). Use it before create_post, or to find what to merge (merge_posts). Scores of 0.4 and above are usually the same request.',
    scope: 'posts:read',
    write: false,
    input: {
      post_id: postId.optional().describe('A post to find duplicates of (post_...)'),
      title: z.string().min(1).max(200).optional().describe('A draft title, when there is no post yet'),
      body: z.string().max(20_000).optional().describe('The draft body'),
      limit: z.number().int().min(1).max(20).optional().describe('Candidates to return, 5 by default'),
    },
    async run(ctx, resolved, args) {
      const workspaceId = resolved.workspace.id
      if (args.post_id === undefined && args.title === undefined) throw invalid(['arguments'], 'Give post_id or title')
      const post = args.post_id !== undefined ? await findPost(ctx.db, workspaceId, args.post_id) : undefined
      const draft = post ? { title: post.title, body: post.body, language: languageOfTag(post.language), boardId: post.boardId, labelIds: post.labelIds } : { title: args.title!, body: args.body }
      const found = await similarPosts(ctx.db, workspaceId, draft, { excludeId: post?.id, limit: args.limit ?? 5 })
      return { candidates: (await similarItems(ctx.db, workspaceId, found, false)).map((item) => ({ post: compact(ctx, resolved, item.post, 280), score: item.score, reasons: item.reasons })) }
    },
  },
  {
    name: 'get_post',
    title: 'Get a post',
    description: 'Returns one feedback post in full: title, body, board, status, labels, votes, number of comments, author, and the post it was merged into if any.',
    scope: 'posts:read',
    write: false,
    input: { post_id: postId },
    async run(ctx, resolved, args) {
      return compact(ctx, resolved, await getPost(ctx.db, resolved.workspace.id, args.post_id))
    },
  },
  {
    name: 'create_post',
    title: 'Create a post',
    description: 'Creates a new feedback post on a board. Search first (search_posts) and vote on an existing post instead when the request is already there. With email, the post is made on behalf of that end user (created when unknown); otherwise it is authored by this connection.',
    scope: 'posts:write',
    write: true,
    input: {
      board: z.string().min(1).max(64).describe('Board slug (from list_boards)'),
      title: z.string().min(1).max(200).describe('Short summary of the request'),
      body: z.string().max(20_000).optional().describe('Details, in the customer\'s words where possible'),
      labels: labels.optional(),
      status: z.string().min(1).max(64).optional().describe('Initial status name; the board default when omitted'),
      email: email.optional().describe('The end user this feedback comes from'),
    },
    async run(ctx, resolved, args) {
      const { board, ...input } = args
      return compact(ctx, resolved, await createPost(ctx.db, resolved.workspace.id, resolved.caller, board, input))
    },
  },
  {
    name: 'update_post',
    title: 'Update a post\'s status or labels',
    description: 'Triages a post: sets its status (e.g. "planned", "in progress", "complete") and/or replaces its labels. A status change is recorded in the post\'s history and notifies subscribers.',
    scope: 'posts:write',
    write: true,
    input: {
      post_id: postId,
      status: z.string().min(1).max(64).optional().describe('Status name or id'),
      labels: labels.optional(),
    },
    async run(ctx, resolved, args) {
      const changes = { ...(args.status !== undefined ? { status: args.status } : {}), ...(args.labels !== undefined ? { labels: args.labels } : {}) }
      if (!Object.keys(changes).length) return compact(ctx, resolved, await getPost(ctx.db, resolved.workspace.id, args.post_id))
      return compact(ctx, resolved, await updatePost(ctx.db, resolved.workspace.id, resolved.caller, args.post_id, changes))
    },
  },
  {
    name: 'comment_on_post',
    title: 'Comment on a post',
    description: 'Adds a comment to a post. Public comments are visible to customers on the portal; internal: true makes it a team-only note (needs the comments:internal scope). With email, the comment is made on behalf of that end user.',
    scope: 'comments:write',
    write: true,
    input: {
      post_id: postId,
      body: z.string().min(1).max(10_000).describe('The comment text'),
      internal: z.boolean().optional().describe('Team-only note, hidden from customers'),
      email: email.optional().describe('The end user this comment comes from'),
    },
    async run(ctx, resolved, args) {
      const { post_id, ...input } = args
      const comment = await createComment(ctx.db, resolved.workspace.id, resolved.caller, post_id, input)
      return { id: comment.id, post_id, internal: comment.internal, created_at: comment.created_at, url: postUrl(ctx, resolved, post_id) }
    },
  },
  {
    name: 'vote_on_post',
    title: 'Vote for a post on behalf of an end user',
    description: 'Records that an end user wants this post: adds their vote, or removes it when they had already voted (a toggle; the result says which). Name the voter by email (created when unknown) or end_user_id.',
    scope: 'votes:write',
    write: true,
    input: {
      post_id: postId,
      email: email.optional().describe('The voter\'s e-mail address'),
      end_user_id: z.string().min(1).max(64).optional().describe('The voter\'s end-user id (eu_...)'),
    },
    async run(ctx, resolved, args) {
      const { post_id, ...voter } = args
      const result = await toggleVote(ctx.db, resolved.workspace.id, resolved.caller, post_id, voter)
      return { post_id, ...result, url: postUrl(ctx, resolved, post_id) }
    },
  },
  {
    name: 'merge_posts',
    title: 'Merge a duplicate post into another',
    description: 'Merges a duplicate post into the post that should be kept: votes move (one per voter), comments move, and the duplicate disappears from lists, pointing to the kept post. Cannot be undone.',
    scope: 'posts:write',
    write: true,
    input: {
      post_id: postId.describe('The duplicate, which goes away'),
      into_post_id: postId.describe('The post to keep'),
    },
    async run(ctx, resolved, args) {
      const { post, into } = await mergePost(ctx.db, resolved.workspace.id, args.post_id, args.into_post_id)
      return { merged: compact(ctx, resolved, post, 0), into: compact(ctx, resolved, into, 280) }
    },
  },
]
