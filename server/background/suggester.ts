// The suggester loop (in the background worker): works off the duplicate-check queue that the dispatcher
// fills for each new post (modules/duplicates/queue.ts), so creating a post never waits on the similarity
// search. Woken when checks commit, like the mailer; sleeps until a lease runs out or the backstop.
import { describeError } from '../db/errors.ts'
import { IDLE_BACKSTOP_MS } from '../db/work.ts'
import { msUntilDuplicateCheck, runDuplicateChecks } from '../modules/duplicates/queue.ts'
import type { BackgroundContext } from './context.ts'
import { wokenLoop, type WokenLoop } from './woken-loop.ts'

/**
 * A suggestion may arrive a moment late: after each wake the loop waits this long before it claims, so a
 * burst of new posts is claimed (and its term counts folded) once per batch, not once per post.
 */
const CHECK_GATHER_MS = 100

export function startSuggester(ctx: BackgroundContext, options: { pollMs?: number } = {}): WokenLoop {
  const onError = (postId: string, error: unknown) => ctx.log.error('duplicate suggestion step failed', { postId, error: describeError(error) })
  return wokenLoop(ctx.database.listenForWork, ['duplicate_checks'], async (waker, running) => {
    while (running()) {
      let sleepMs = options.pollMs ?? IDLE_BACKSTOP_MS
      try {
        if (await runDuplicateChecks(ctx.db, onError)) continue
        const due = await msUntilDuplicateCheck(ctx.db)
        if (due !== null) sleepMs = Math.max(50, Math.min(sleepMs, due))
      } catch (error) {
        if (!running()) break
        ctx.log.error('suggester', { error: describeError(error) })
      }
      if (running()) await waker.sleep(sleepMs)
    }
  }, { gatherMs: CHECK_GATHER_MS })
}
