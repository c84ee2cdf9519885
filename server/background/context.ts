// What background work needs: the server's AppContext minus everything only requests use (rate
// limiter, file storage, token keys). The worker builds one of its own (worker.ts); tests and the
// in-process runners pass the app's, which has all of this.
import type { AppContext } from '../context.ts'
import type { Database } from '../db/client.ts'

export interface BackgroundContext extends Pick<AppContext, 'config' | 'db' | 'log' | 'mail' | 'secrets' | 'outbound' | 'storage'> {
  /** Which driver, and the wake-ups of committed work (server/db/work.ts). */
  database: Pick<Database, 'driver' | 'listenForWork'>
}
