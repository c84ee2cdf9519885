import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import type { RateRule } from '../../plugins/rate-limit.ts'
import { findPost } from '../feedback/lookups.ts'
import { readPage } from '../../lib/paging.ts'
import { languageOfTag, writerLanguage } from '../../lib/language.ts'
import { PostIdParams } from '../posts/model.ts'
import { mergePost } from '../posts/service.ts'
import { findWorkspace } from '../public/service.ts'
import { PublicWorkspaceParams, WorkspaceSlugParams } from '../../lib/schema.ts'
import { SimilarDraft, SimilarQuery, SimilarResponse, SuggestionListQuery, SuggestionPage, SuggestionParams, SuggestionResponse } from './model.ts'
import { acceptSuggestion, dismissSuggestion, listSuggestions, similarItems } from './service.ts'
import { similarPosts } from './similarity.ts'

const tags = ['Duplicates']
const FORMULA = 'Candidates come from full-text search for the draft\'s most selective stemmed, unaccented terms in each post\'s language (and from pg_trgm title similarity when that finds few), re-ranked by a fixed formula: 0.45 × the share of the draft\'s idf-weighted terms the post shares (title terms count double) + 0.35 × the idf-weighted overlap of the titles\' terms + 0.20 × trigram similarity of the titles, +0.05 on the same board, +0.05 with a shared label (docs/duplicates.md). Deterministic: the same posts give the same answer.'
// The draft form is read on every pause in typing: limited per IP like the public search.
const SIMILAR_LIMITS: RateRule[] = [{ name: 'public-similar:ip', by: ({ clientIp }) => clientIp }]

export const duplicatesModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/posts/:post_id/similar', async ({ workspace, params, query }) => {
      const post = await findPost(ctx.db, workspace.id, params.post_id)
      const found = await similarPosts(ctx.db, workspace.id, { title: post.title, body: post.body, language: languageOfTag(post.language), boardId: post.boardId, labelIds: post.labelIds },
        { excludeId: post.id, limit: query.limit ?? 5 })
      return { items: await similarItems(ctx.db, workspace.id, found, false) }
    }, {
      params: PostIdParams,
      query: SimilarQuery,
      workspace: { scope: 'posts:read' },
      response: { 200: SimilarResponse },
      detail: { operationId: 'similarPosts', tags, summary: 'Posts that ask what this one asks', description: `Ranked candidates (best first) with a \`score\` and \`reasons\`; the post itself and merged posts are left out. ${FORMULA} A post of another workspace is 404.` },
    })
    .post('/public/:workspace_slug/similar', async ({ params, body, request }) => {
      const workspace = await findWorkspace(ctx.db, params.workspace_slug)
      const found = await similarPosts(ctx.db, workspace.id, { title: body.title, body: body.body, language: writerLanguage(body.locale, request) },
        { publicOnly: true, limit: body.limit ?? 5 })
      return { items: await similarItems(ctx.db, workspace.id, found, true) }
    }, {
      params: PublicWorkspaceParams,
      body: SimilarDraft,
      rateLimit: SIMILAR_LIMITS,
      response: { 200: SimilarResponse },
      detail: { operationId: 'similarToDraft', tags, security: [], summary: 'Posts like a draft, while a visitor types', description: `For the widget's and portal's "vote instead" suggestions: the draft's \`title\` (and \`body\`) against the posts of the public boards, as the public sees them. The draft's language is its \`locale\`, else \`Content-Language\`, else detected. ${FORMULA} Limited per IP (RATE_LIMIT_PER_IP a minute); debounce keystrokes.` },
    })
    .get('/workspaces/:workspace_slug/duplicate-suggestions', ({ workspace, query }) => listSuggestions(ctx.db, workspace.id, readPage(query)), {
      params: WorkspaceSlugParams,
      query: SuggestionListQuery,
      workspace: { scope: 'posts:read' },
      response: { 200: SuggestionPage },
      detail: { operationId: 'listDuplicateSuggestions', tags, summary: 'Open duplicate suggestions, newest first', description: 'Stored when a post is created: its candidates scoring 0.4 or more (at most three), each raising `post.duplicate_suggested`. Suggestions where either post has since been merged are left out.' },
    })
    .post('/workspaces/:workspace_slug/duplicate-suggestions/:suggestion_id/accept', ({ workspace, params }) =>
      acceptSuggestion(ctx.db, workspace.id, params.suggestion_id, (sourceId, intoId) => mergePost(ctx.db, workspace.id, sourceId, intoId)), {
      params: SuggestionParams,
      workspace: { scope: 'posts:write' },
      response: { 200: SuggestionResponse },
      detail: { operationId: 'acceptDuplicateSuggestion', tags, summary: 'Accept: merge the post into its candidate', description: 'Merges `post` into `candidate` with the merge service (votes move de-duplicated by voter, comments move; raises `post.merged`) and marks the suggestion accepted. A suggestion already decided is 409; one of another workspace is 404.' },
    })
    .post('/workspaces/:workspace_slug/duplicate-suggestions/:suggestion_id/dismiss', ({ workspace, params }) => dismissSuggestion(ctx.db, workspace.id, params.suggestion_id), {
      params: SuggestionParams,
      workspace: { scope: 'posts:write' },
      response: { 200: SuggestionResponse },
      detail: { operationId: 'dismissDuplicateSuggestion', tags, summary: 'Dismiss: never suggest this pair again', description: 'The pair stays stored as dismissed, so neither post is suggested for the other again. A suggestion already decided is 409; one of another workspace is 404.' },
    })
