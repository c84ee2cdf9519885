import { startEventDispatcher } from '../../server/background/dispatcher.ts'
import { startMailer } from '../../server/background/mailer.ts'
import type { Harness } from './harness.ts'

/** The event dispatcher and the mailer loop of `h`, as a server's background worker runs them; `stop` ends both. */
export function startMailLoops(h: Harness) {
  const loops = [startEventDispatcher({ db: h.database.sql, log: h.ctx.log, listenForWork: h.database.listenForWork }), startMailer(h.ctx)]
  return { stop: async () => { for (const loop of loops) await loop.stop() } }
}
