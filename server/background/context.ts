// What background work needs: the server's AppContext minus everything only requests use (rate
// limiter, file storage, token keys). The worker builds one of its own (worker.ts); tests and the
// in-process runners pass the app's, which has all of this.
import type { AppContext } from '../context.ts'
import type { Database } from '../db/client.ts'

export interface BackgroundContext extends Pick<AppContext, 'config' | 'db' | 'log' | 'mail' | 'secrets' | 'outbound' | 'storage'> {
  /**
   * Which driver, the wake-ups of committed work (server/db/work.ts), and the runner of the loops' SQL-text
   * statements (server/db/sql-text.ts). In the worker, `db` (drizzle) exists once `loadDb` has run: only the
   * rare loops' work (mail, duplicate checks, imports, chat sends) reads through it.
   */
  database: Pick<Database, 'driver' | 'listenForWork' | 'sql'> & {
    /** In the worker: loads drizzle (as an ES module, the copy the feature modules import) before `db` is first read. */
    loadDb?(): Promise<void>
  }
}
