import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { readPage } from '../../lib/paging.ts'
import { PostIdParams, verifiedFilter } from '../posts/model.ts'
import { VoteListQuery, VoteListResponse, VoteToggle, VoteToggleResponse } from './model.ts'
import * as votes from './service.ts'

const tags = ['Votes']

export const votesModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/posts/:post_id/votes', ({ workspace, params, query }) => votes.listVotes(ctx.db, workspace.id, params.post_id, readPage(query), verifiedFilter(query.verified)), {
      params: PostIdParams,
      query: VoteListQuery,
      workspace: { scope: 'votes:read' },
      response: { 200: VoteListResponse },
      detail: { operationId: 'listVotes', tags, summary: "A post's voters, newest first", description: 'With an API key (`votes:read`) or a dashboard session. Paged (`page`, `per_page` or `limit`) in the common envelope. `verified=false` lists only the votes of anonymous visitors who have not confirmed their e-mail address, `verified=true` the others.' },
    })
    .post('/posts/:post_id/votes', ({ workspace, caller, params, body }) => votes.toggleVote(ctx.db, workspace.id, caller, params.post_id, body ?? {}), {
      params: PostIdParams,
      body: VoteToggle,
      workspace: { scope: 'votes:write' },
      response: { 200: VoteToggleResponse },
      detail: { operationId: 'toggleVote', tags, summary: 'Toggle a vote', description: 'Adds the vote when the voter has none, removes it otherwise; answers `{voted, votes}`. A key names the voter with `email` (an unknown address creates the end user) or `end_user_id`. Raises `vote.created` or `vote.deleted`.' },
    })
