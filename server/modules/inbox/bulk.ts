import type { Db, Tx } from '../../db/client.ts'
import { ApiError, invalid, type ValidationIssue } from '../../errors.ts'
import type { Caller } from '../../plugins/auth.ts'
import { findBoard, resolveLabels, resolveStatus } from '../feedback/lookups.ts'
import { getPost } from '../posts/queries.ts'
import { deletePost, mergePost } from '../posts/service.ts'
import { editPosts, type BulkEdit, type BulkItem } from './bulk-edit.ts'

/** The edits bulk-edit.ts applies set-based, or a merge or a delete, for each of `post_ids`. */
export interface BulkInput extends BulkEdit {
  post_ids: string[]
  merge_into_post_id?: string
  delete?: true
}

/** Merge and delete, post by post through the single-post services, each in a savepoint so every post gets its result. */
async function mergeOrDelete(tx: Tx, workspaceId: string, input: BulkInput) {
  const results: BulkItem[] = []
  for (const postId of input.post_ids) {
    try {
      await tx.transaction(async (item) => { if (input.delete) await deletePost(item, workspaceId, postId); else await mergePost(item, workspaceId, postId, input.merge_into_post_id!) })
      results.push({ post_id: postId, ok: true, error: null })
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      results.push({ post_id: postId, ok: false, error: { code: error.code, message: error.issues?.[0]?.msg ?? error.message } })
    }
  }
  return results
}

/** Rules a schema cannot say: something to do, merge and delete alone, a message only with a status. */
function checkShape(input: BulkInput) {
  const edits = ['status', 'add_labels', 'remove_labels', 'owner_user_id', 'board_slug'].filter((name) => input[name as keyof BulkInput] !== undefined)
  const actions = edits.length + (input.merge_into_post_id !== undefined ? 1 : 0) + (input.delete ? 1 : 0)
  if (input.status_message !== undefined && input.status === undefined) throw invalid(['body', 'status_message'], 'status_message goes with a status change: send `status` too')
  if (actions === 0) throw invalid(['body'], 'Name something to do: status, add_labels, remove_labels, owner_user_id, board_slug, merge_into_post_id or delete')
  if (input.merge_into_post_id !== undefined && actions > 1) throw invalid(['body', 'merge_into_post_id'], 'A merge is done alone: send it without other actions')
  if (input.delete && actions > 1) throw invalid(['body', 'delete'], 'A delete is done alone: send it without other actions')
  if (input.merge_into_post_id !== undefined && input.post_ids.includes(input.merge_into_post_id)) {
    throw invalid(['body', 'merge_into_post_id'], 'The target of the merge cannot be one of the posts merged into it')
  }
}

/**
 * Applies one change to every post, all in one transaction: edits set-based (bulk-edit.ts), merge and
 * delete through the single-post services. Every post gets its result, and when any fails the whole
 * transaction is rolled back (nothing applied, no event recorded) and the list comes back in a 422.
 * Events of a successful call are written with it, one set per post, as single changes would be.
 */
export async function bulkChange(db: Db, workspaceId: string, caller: Caller, input: BulkInput) {
  checkShape(input)
  const failed = new ApiError('VALIDATION_ERROR', 'No post was changed: at least one could not be (see `results`)')
  let results: BulkItem[] = []
  try {
    await db.transaction(async (tx) => {
      // Names resolved once, before any post: a wrong one is one 422 at its field, not 500 failures.
      if (input.status !== undefined) await resolveStatus(tx, workspaceId, input.status)
      if (input.board_slug !== undefined) await findBoard(tx, workspaceId, input.board_slug).catch(() => { throw invalid(['body', 'board_slug'], `Unknown board "${input.board_slug}"`) })
      await resolveLabels(tx, workspaceId, input.add_labels ?? [], ['body', 'add_labels'])
      await resolveLabels(tx, workspaceId, input.remove_labels ?? [], ['body', 'remove_labels'])
      if (input.merge_into_post_id !== undefined) await getPost(tx, workspaceId, input.merge_into_post_id).catch(() => { throw invalid(['body', 'merge_into_post_id'], 'The target post is not a post of this workspace') })

      if (input.delete || input.merge_into_post_id !== undefined) results = await mergeOrDelete(tx, workspaceId, input)
      else results = await editPosts(tx, workspaceId, caller, input.post_ids, input)
      if (results.some((result) => !result.ok)) throw failed
    })
  } catch (error) {
    if (error !== failed) throw error
    failed.extra.results = results
    failed.issues = results.flatMap((result, i): ValidationIssue[] => result.ok ? [] : [{ loc: ['body', 'post_ids', i], msg: `${result.post_id}: ${result.error!.message}`, type: result.error!.code.toLowerCase() }])
    results = []
    throw failed
  }
  return { results }
}
