import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { readPage } from '../feedback/paging.ts'
import { PostIdParams } from '../posts/model.ts'
import { VoteListQuery, VoteListResponse, VoteToggle, VoteToggleResponse } from './model.ts'
import * as votes from './service.ts'

const tags = ['Votes']

export const votesModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/posts/:post_id/votes', ({ workspace, params, query }) => votes.listVotes(ctx.db, workspace.id, params.post_id, readPage(query)), {
      params: PostIdParams,
      query: VoteListQuery,
      workspace: { scope: 'votes:read' },
      response: { 200: VoteListResponse },
      detail: { operationId: 'listVotes', tags, summary: "A post's voters, newest first" },
    })
    .post('/posts/:post_id/votes', ({ workspace, caller, params, body }) => votes.toggleVote(ctx.db, workspace.id, caller, params.post_id, body ?? {}), {
      params: PostIdParams,
      body: VoteToggle,
      workspace: { scope: 'votes:write' },
      response: { 200: VoteToggleResponse },
      detail: { operationId: 'toggleVote', tags, summary: 'Toggle a vote', description: 'Adds the vote when the voter has none, removes it otherwise; answers `{voted, votes}`. A key names the voter with `email` (an unknown address creates the end user) or `end_user_id`. Raises `vote.created` or `vote.deleted`.' },
    })
