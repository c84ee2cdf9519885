// Per-process caches that every process drops at once. A trigger on each table a cache reads NOTIFYs
// `chorus_cache` with the table's name at commit (migration 0043); the process's main thread hears it on a
// LISTEN connection of its own (`listenForCaches`, opened by server/index.ts; on PGlite the engine itself,
// which calls listeners before the writing statement returns) and counts each change; a cache checks the
// counters of its tables at every read. Not the background worker's connection: loading a rare loop on its
// first job stalls that thread once, and a worker restart drops its connections; neither may hold back a
// change every other process already sees.
// The caches are on only while that connection listens: from the moment it is lost (or before it first
// listens, or in a process that never listens, such as the in-process test harness on PostgreSQL) every
// look-up goes to the database, so nothing committed while no one was listening can be served from memory.
// Each (re)connect drops everything.
// The public answers (server/lib/public-cache.ts) hear the same channel with payloads `public:<workspace id>`
// (migration 0049): those count in one of PUBLIC_SLOTS counters by the workspace's hash (two workspaces that
// share a slot only drop each other's pages more often), and `workspaces` or `public:*` in one that drops all.

import type { Database } from './client.ts'

/** The channel of migration 0043's triggers. */
export const CACHE_CHANNEL = 'chorus_cache'

/** The tables whose triggers notify `chorus_cache`: one counter each. */
export const CACHED_TABLES = ['api_keys', 'workspaces', 'members'] as const
export type CachedTable = (typeof CACHED_TABLES)[number]

/** Counters of public changes by workspace hash. */
const PUBLIC_SLOTS = 256
/** Where the public counters start: any public change, every workspace's, then one per slot. */
const PUBLIC_ANY = 1 + CACHED_TABLES.length
const PUBLIC_ALL = PUBLIC_ANY + 1
const PUBLIC_SLOT0 = PUBLIC_ALL + 1

/** Slot 0: the listening connection's epoch, odd while it listens; then one change counter per table, then the public counters. */
const changeCounters = () => new Int32Array(4 * (PUBLIC_SLOT0 + PUBLIC_SLOTS))

/** FNV-1a of a workspace id, to its public slot (exported for tests: two workspaces may share one). */
export function publicSlot(workspaceId: string) {
  let hash = 0x811c9dc5
  for (let i = 0; i < workspaceId.length; i++) hash = Math.imul(hash ^ workspaceId.charCodeAt(i), 0x01000193)
  return PUBLIC_SLOT0 + ((hash >>> 0) % PUBLIC_SLOTS)
}

export interface ChangeFeed {
  /** True while the process hears every change: caches answer only then. */
  readonly live: boolean
  /** A committed change to `table` (the payload of `chorus_cache`); unknown names are ignored. */
  changed(table: string): void
  /** The listening connection is up (true) or lost (false); either way every cache is dropped. */
  setLive(live: boolean): void
  /** A number that changes whenever any of `tables` changes or the connection comes or goes. */
  stamp(tables: readonly CachedTable[]): number
  /** A number that changes whenever what a workspace's public pages show may have changed, or the connection comes or goes. */
  publicStamp(workspaceId: string): number
  /** A number that changes with every public change of any workspace (and with the connection). */
  readonly publicChanges: number
}

export function createChangeFeed(): ChangeFeed {
  const counters = changeCounters()
  const slot = (table: string) => CACHED_TABLES.indexOf(table as CachedTable) + 1
  return {
    get live() { return (counters[0]! & 1) === 1 },
    changed(table) {
      if (table.startsWith('public:')) {
        const workspaceId = table.slice(7)
        counters[PUBLIC_ANY]! += 1
        counters[workspaceId === '*' ? PUBLIC_ALL : publicSlot(workspaceId)]! += 1
        return
      }
      const index = slot(table)
      if (index > 0) counters[index]! += 1
      // A workspace's settings, branding, slug or deletion: rare, so every public answer goes.
      if (table === 'workspaces') {
        counters[PUBLIC_ANY]! += 1
        counters[PUBLIC_ALL]! += 1
      }
    },
    setLive(live) {
      // Always a new epoch, so a reconnect drops what was cached before it even if no close was seen.
      const epoch = counters[0]!
      counters[0] = epoch + ((epoch & 1) === (live ? 1 : 0) ? 2 : 1)
    },
    stamp(tables) {
      // Each counter moves by small steps: weighting by position keeps two tables' changes from cancelling out.
      let stamp = counters[0]!
      for (const table of tables) stamp = (stamp * 31 + counters[slot(table)]!) | 0
      return stamp
    },
    publicStamp(workspaceId) {
      const epoch = counters[0]!
      return ((epoch * 31 + counters[PUBLIC_ALL]!) * 31 + counters[publicSlot(workspaceId)]!) | 0
    },
    get publicChanges() { return (counters[0]! * 31 + counters[PUBLIC_ANY]!) | 0 },
  }
}

/**
 * Keeps `feed` hearing `chorus_cache` on the database's LISTEN connection, trying each second until the first
 * LISTEN succeeds (the database may still be starting; the caches stay off meanwhile); the connection itself
 * re-listens after a drop. `stop()` ends it, caches off.
 */
export function listenForCaches(database: Pick<Database, 'listenForChanges'>, feed: ChangeFeed) {
  let stopped = false
  const listening = (async () => {
    while (!stopped) {
      try {
        return await database.listenForChanges(feed.changed, feed.setLive)
      } catch {
        await Bun.sleep(1000)
      }
    }
  })()
  return {
    async stop() {
      stopped = true
      await (await listening)?.()
    },
  }
}

export interface BoundedCache<V> {
  /**
   * The cached answer for `key`, else loads it through `load` and keeps it, unless the feed is not live or
   * one of the cache's tables changed while it loaded (the answer may predate the change). A null answer
   * is not kept: a row created since is not announced. `fresh` skips the cached answer (and replaces it).
   */
  through(key: string, load: () => Promise<V | undefined>, fresh?: boolean): Promise<V | undefined>
  readonly size: number
}

/**
 * A map of at most `maxEntries` answers (the oldest inserted goes first), emptied whenever one of
 * `tables` changes or the feed's connection comes or goes. `maxEntries` 0 turns it off.
 */
export function boundedCache<V>(feed: ChangeFeed, tables: readonly CachedTable[], maxEntries: number): BoundedCache<V> {
  const entries = new Map<string, V>()
  let validAt = feed.stamp(tables)
  /** The current stamp, with the entries dropped if it moved. */
  const current = () => {
    const stamp = feed.stamp(tables)
    if (stamp !== validAt) {
      entries.clear()
      validAt = stamp
    }
    return stamp
  }
  return {
    async through(key, load, fresh = false) {
      const started = current()
      if (feed.live && !fresh) {
        const hit = entries.get(key)
        if (hit !== undefined) return hit
      }
      const value = await load()
      if (feed.live && current() === started && maxEntries > 0 && value != null) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!)
        entries.set(key, value)
      }
      return value
    },
    get size() { return entries.size },
  }
}
