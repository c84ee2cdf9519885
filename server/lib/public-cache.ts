// Rendered public answers (the widget's list, the portal's pages, the public workspace) kept per process, so a
// popular board costs no query per view. An answer is kept under a key made of everything that changes its
// bytes, only when it is the same for every viewer (the routes decide: no session, no notice), and only while
// the process hears every change (server/db/changes.ts): a committed write to what a workspace's public pages
// show (migration 0049) drops that workspace's answers on every process, and while the LISTEN connection is
// down nothing is served from memory. Bounded by entries and by bytes, least recently used first out.
import type { ChangeFeed } from '../db/changes.ts'

/** What a load answers: the value, and what to keep it under when it may be shared. */
export interface Loaded<V> {
  value: V
  /** The workspace whose changes drop it and its size in bytes; absent: answer once, keep nothing. */
  keep?: { workspaceId: string; bytes: number }
}

interface Entry<V> { value: V; workspaceId: string; stamp: number; bytes: number; until: number }

export interface PublicCache {
  /** The kept answer for `key`, else `load`'s (kept when it says so and nothing public changed meanwhile). */
  through<V>(key: string, load: () => Promise<Loaded<V>>): Promise<V>
  /** Whether an answer loaded now could be kept (the cache is on and the process hears every change). */
  readonly keeping: boolean
  /** Counts since start, for benchmarks and tests. */
  readonly stats: { hits: number; misses: number; entries: number; bytes: number }
}

/**
 * `ttlMs` (0: none) bounds how long an answer is kept even without a change: for answers read from a replica,
 * which may not have replayed a change yet when its notification (sent by the primary at commit) drops them.
 */
export function publicCache(feed: ChangeFeed, limits: { entries: number; bytes: number; ttlMs?: number }): PublicCache {
  const entries = new Map<string, Entry<unknown>>()
  // Concurrent misses of one key share one load: a page dropped under load is rendered once, not by every request.
  const loading = new Map<string, { at: number; promise: Promise<Loaded<unknown>> }>()
  let bytes = 0
  let hits = 0
  let misses = 0
  const on = limits.entries > 0 && limits.bytes > 0

  const drop = (key: string, entry: Entry<unknown>) => {
    entries.delete(key)
    bytes -= entry.bytes
  }

  function keep(key: string, loaded: Loaded<unknown>, at: number) {
    if (!loaded.keep || loaded.keep.bytes > limits.bytes) return
    // The slot first, then the change count: a change that lands between them fails the check (changes.ts counts in the other order).
    const stamp = feed.publicStamp(loaded.keep.workspaceId)
    if (!feed.live || feed.publicChanges !== at) return
    const old = entries.get(key)
    if (old) drop(key, old)
    entries.set(key, { value: loaded.value, workspaceId: loaded.keep.workspaceId, stamp, bytes: loaded.keep.bytes, until: limits.ttlMs ? performance.now() + limits.ttlMs : Infinity })
    bytes += loaded.keep.bytes
    // A Map iterates in insertion order and a hit re-inserts: the first entries are the least recently used.
    for (const [oldest, entry] of entries) {
      if (entries.size <= limits.entries && bytes <= limits.bytes) break
      drop(oldest, entry)
    }
  }

  return {
    async through<V>(key: string, load: () => Promise<Loaded<V>>): Promise<V> {
      const live = on && feed.live
      if (live) {
        const hit = entries.get(key)
        if (hit) {
          drop(key, hit)
          if (hit.stamp === feed.publicStamp(hit.workspaceId) && (hit.until === Infinity || performance.now() < hit.until)) {
            entries.set(key, hit)
            bytes += hit.bytes
            hits++
            return hit.value as V
          }
        }
      }
      misses++
      if (!live) return (await load()).value
      const at = feed.publicChanges
      const pending = loading.get(key)
      if (pending && pending.at === at) return (await pending.promise).value as V
      const promise = load()
      loading.set(key, { at, promise })
      try {
        const loaded = await promise
        keep(key, loaded, at)
        return loaded.value
      } finally {
        if (loading.get(key)?.promise === promise) loading.delete(key)
      }
    },
    get keeping() { return on && feed.live },
    get stats() { return { hits, misses, entries: entries.size, bytes } },
  }
}
