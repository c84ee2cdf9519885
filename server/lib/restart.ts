// A long-running part that dies (a server process under the supervisor, the webhook delivery loop) is
// started again: soon after a good run, and ever more slowly while it keeps dying, so a crash loop
// neither spins a core nor floods the log.

const FIRST_MS = 200
const MAX_MS = 30_000
/** A part that ran this long before dying counts as healthy: its next restart is the first again. */
const HEALTHY_RUN_MS = 60_000

/** How long to wait before the next start, given the previous wait (none yet: undefined) and how long this run lasted. */
export function nextRestartDelay(previousMs: number | undefined, ranForMs: number) {
  if (previousMs === undefined || ranForMs > HEALTHY_RUN_MS) return FIRST_MS
  return Math.min(previousMs * 2, MAX_MS)
}
