import { and, eq } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { endUsers, posts as postsTable } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import type { Language } from '../../lib/language.ts'
import type { EndUserContext } from '../../plugins/end-user-writer.ts'
import * as comments from '../comments/service.ts'
import { findBoard } from '../feedback/lookups.ts'
import { findPosts, getPost } from '../posts/queries.ts'
import { assessWrite, needsProofOfWork, refuseBlocked } from '../moderation/service.ts'
import { challengeSecrets, redeemChallenge } from '../contact/service.ts'
import type { AppContext } from '../../context.ts'
import * as posts from '../posts/service.ts'
import * as votes from '../votes/service.ts'

// The end-user writes behind the widget's JSON routes and the portal's forms: the feedback services
// with the writer the `endUser` path resolved, behind the public visibility rules.

/** The writer's language, kept for their e-mail (post-subscriptions/i18n.ts); the latest write's wins. */
async function rememberLocale(db: Db, writer: EndUserContext, locale: string | undefined) {
  const endUserId = 'endUserId' in writer.caller ? writer.caller.endUserId : writer.anonymous?.identity.id
  if (locale && endUserId) await db.update(endUsers).set({ locale }).where(and(eq(endUsers.id, endUserId), eq(endUsers.workspaceId, writer.workspace.id)))
}

/**
 * A new post on a public board, answered as the public sees it with `moderation`: null when published,
 * `held` when it waits for the team ("awaiting review", docs/moderation.md). A blocked writer is 403.
 */
export async function postAsEndUser(ctx: Pick<AppContext, 'db' | 'secrets'>, writer: EndUserContext, boardSlug: string, input: { title: string; body?: string; locale?: string; language?: Language; challenge?: string }) {
  const { db } = ctx
  const board = await findBoard(db, writer.workspace.id, boardSlug)
  // A private board does not exist for the public.
  if (board.isPrivate) throw notFound('Board')
  // The contact form's challenge, spent once on any process (contact/service.ts).
  if (needsProofOfWork(writer)) await redeemChallenge(ctx, await challengeSecrets(ctx.secrets), input.challenge)
  const moderation = await assessWrite(db, ctx.secrets, writer, `${input.title}\n${input.body ?? ''}`)
  const created = await posts.createPost(db, writer.workspace.id, writer.caller, board.slug, { title: input.title, body: input.body, language: input.language }, moderation)
  await rememberLocale(db, writer, input.locale)
  // Rendered as the public sees it, held or not: the writer sees their own post awaiting review.
  const [post] = await findPosts(db, eq(postsTable.id, created.id), [], 1, true)
  return { ...post!, moderation: moderation.held ? ('held' as const) : null }
}

/** Toggles the writer's vote on a public post: `{voted, votes}`; a vote this writer may not take back stays cast (`voteRemoval`). */
export async function voteAsEndUser(db: Db, writer: EndUserContext, postId: string, locale?: string) {
  await getPost(db, writer.workspace.id, postId, { publicView: true })
  const vote = await votes.toggleVote(db, writer.workspace.id, writer.caller, postId, {}, writer.voteRemoval)
  await rememberLocale(db, writer, locale)
  return vote
}

/** A public (never internal) comment on a public post; a blocked writer is 403. */
export async function commentAsEndUser(ctx: Pick<AppContext, 'db' | 'secrets'>, writer: EndUserContext, postId: string, input: { body: string; parent_id?: string; locale?: string }) {
  const { db } = ctx
  await getPost(db, writer.workspace.id, postId, { publicView: true })
  // Blocks apply to comments too; the score and holding cover posts only (docs/moderation.md).
  await refuseBlocked(db, ctx.secrets, writer)
  const comment = await comments.createComment(db, writer.workspace.id, writer.caller, postId, { body: input.body, parent_id: input.parent_id, internal: false }, true)
  await rememberLocale(db, writer, input.locale)
  return comment
}
