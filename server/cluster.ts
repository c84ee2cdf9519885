// One server process per core on PostgreSQL (WEB_CONCURRENCY). This supervisor starts that many copies
// of the server, each listening on the same port with SO_REUSEPORT so the kernel spreads connections
// across them, restarts one that dies (not one that exited EXIT_CANNOT_START: then it stops them all
// and exits 1), and passes SIGTERM/SIGINT on. It opens no database (it only waits, bounded, for
// PostgreSQL to answer before the first start: server/index.ts) and holds no state: what the
// processes must agree on lives in PostgreSQL (rate limits, delivery leases, wake-ups) or Redis. The embedded database (PGlite) belongs to one process, so it always runs one.
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import type { Config } from './config.ts'
import type { Logger } from './lib/log.ts'
import { nextRestartDelay } from './lib/restart.ts'
import { EXIT_CANNOT_START } from './startup.ts'

/** Set in the environment of each supervised process (its index), so it serves instead of supervising. */
export const PROCESS_INDEX_ENV = 'CHORUS_PROCESS_INDEX'

const usesPostgres = (config: Config) => config.databaseUrl !== undefined && /^postgres(ql)?:/.test(config.databaseUrl)

/**
 * The cores this process may use: the cgroup's CPU limit when it sets one (a container's `--cpus`,
 * compose's `cpus:`, a systemd CPUQuota), rounded up, never more than the host's cores. A container
 * limited to 1 CPU on a 32-core host runs one process, not 32 that share one CPU's time.
 */
export function availableCores(hostCores = navigator.hardwareConcurrency || 1, cgroupRoot = '/sys/fs/cgroup'): number {
  const read = (path: string) => { try { return readFileSync(`${cgroupRoot}/${path}`, 'utf8').trim() } catch { return undefined } }
  // cgroup v2: "<quota> <period>" or "max <period>"; v1: two files, quota -1 for none.
  const v2 = read('cpu.max')?.split(/\s+/)
  const [quota, period] = v2 ? [Number(v2[0]), Number(v2[1])] : [Number(read('cpu/cpu.cfs_quota_us') ?? read('cpu.cfs_quota_us')), Number(read('cpu/cpu.cfs_period_us') ?? read('cpu.cfs_period_us'))]
  if (!(quota > 0) || !(period > 0)) return hostCores
  return Math.max(1, Math.min(hostCores, Math.ceil(quota / period)))
}

/** How many server processes to run: WEB_CONCURRENCY, else the cores the cgroup allows; 1 for PGlite or a random port. */
export function processCount(config: Config, cores = availableCores()): number {
  if (!usesPostgres(config) || config.port === 0) return 1
  return config.webConcurrency || cores
}

/**
 * The JavaScriptCore settings a server process starts with (Bun reads `BUN_JSC_*` when it starts, so they
 * are set by whoever starts the process: `npm start`, the Docker image, the supervisor for its processes,
 * the benchmarks). An operator's own value of each wins. Measured on the list benchmark (BENCHMARKS.md,
 * "Notes: memory" and "Notes: a process under 120 MiB"), each against Bun's defaults:
 * - `forceRAMSize`: the memory JSC sizes its heap for (Bun's counterpart of Node's --max-old-space-size,
 *   not a cap). Sized from a host of 16 GiB or more, the heap reaches ~85 MiB between collections (peak
 *   RSS ~186 MiB); sized for 1 GiB it collects at ~40 MiB (~145 MiB).
 * - `useFTLJIT=0`: no fourth-tier (FTL) compiler; the three lower tiers still compile hot code. Its
 *   compilations leave 6–11 MiB of RSS behind. The price is on the lightest requests: `GET /posts/{id}`
 *   at ~0.81× of the raw baseline against ~0.90× with FTL (paired runs); the list and the writes did not
 *   move. `BUN_JSC_useFTLJIT=1` buys it back for that memory.
 * - `smallHeapGrowthFactor=1.75`: after a full collection the heap may grow to 1.75× what survived (JSC's
 *   default 2×), so garbage waits for a smaller heap: 12 MiB less at peak. At 1.5 the collector works
 *   ~25 % more, since JSC then turns most young-generation collections into full ones.
 * With them a process peaks near 100 MiB under the list benchmark (it was ~145 MiB without them, when
 * delivery still ran in a worker thread of its own).
 */
const HEAP_RAM = 1024 ** 3

export const ENGINE_DEFAULTS = {
  BUN_JSC_forceRAMSize: String(HEAP_RAM),
  BUN_JSC_useFTLJIT: '0',
  BUN_JSC_smallHeapGrowthFactor: '1.75',
} as const

/** The engine settings a server process starts with: the operator's where set, else ENGINE_DEFAULTS (the heap sized for the machine's RAM when it has less than 1 GiB). */
export const engineEnv = (env: Record<string, string | undefined>): Record<string, string> => {
  const defaults: Record<string, string> = { ...ENGINE_DEFAULTS, BUN_JSC_forceRAMSize: String(Math.min(HEAP_RAM, totalmem())) }
  return Object.fromEntries(Object.entries(defaults).map(([name, value]) => [name, env[name] || value]))
}

/** True in a process the supervisor started. */
export const isSupervised = () => process.env[PROCESS_INDEX_ENV] !== undefined

/** Calls `stop` once the supervisor's end of stdin closes: a server process never outlives its supervisor. */
export function stopWithSupervisor(stop: () => void) {
  void (async () => {
    const reader = Bun.stdin.stream().getReader()
    while (!(await reader.read()).done);
    stop()
  })().catch(stop)
}

/** Runs `count` server processes until a signal stops them all; exits with 0 when each stopped cleanly. */
export async function superviseProcesses(count: number, env: Record<string, string>, log: Logger): Promise<never> {
  let stopping = false
  const running = new Map<number, ReturnType<typeof Bun.spawn>>()
  const delays = new Map<number, number>()
  let giveUp = () => {}
  let gaveUp = false

  const start = (index: number) => {
    const startedAt = Date.now()
    const child = Bun.spawn([process.execPath, ...process.argv.slice(1)], {
      env: { ...process.env, ...env, ...engineEnv(process.env), [PROCESS_INDEX_ENV]: String(index) },
      // The child watches this pipe: when the supervisor is gone (even SIGKILLed) it reads end-of-file and stops.
      stdio: ['pipe', 'inherit', 'inherit'],
      onExit(_, code, signal) {
        running.delete(index)
        if (stopping) return
        // The process said why in one line (port taken, database unreachable): restarting cannot cure it.
        if (code === EXIT_CANNOT_START) return void giveUp()
        const delay = nextRestartDelay(delays.get(index), Date.now() - startedAt)
        delays.set(index, delay)
        log.warn('server process exited; restarting', { process: index, code, signal, in_ms: delay })
        setTimeout(() => { if (!stopping) start(index) }, delay)
      },
    })
    running.set(index, child)
  }

  // The handlers go in before the first process starts and before "chorus supervising" is logged: a stop
  // that arrives at any moment after that line finds them.
  const clean = new Promise<boolean[]>((resolve) => {
    const stop = async (signal: 'SIGTERM' | 'SIGINT') => {
      if (stopping) return
      stopping = true
      log.info('stopping server processes', { signal })
      const children = [...running.values()]
      for (const child of children) child.kill(signal)
      // A process still loading its modules has no handler yet and ends by the signal itself: nothing had started.
      resolve(await Promise.all(children.map(async (child) => (await child.exited) === 0 || child.signalCode === signal)))
    }
    process.on('SIGTERM', () => void stop('SIGTERM'))
    process.on('SIGINT', () => void stop('SIGINT'))
    giveUp = () => {
      gaveUp = true
      void stop('SIGTERM')
    }
  })
  for (let index = 0; index < count; index++) start(index)
  log.info('chorus supervising', { processes: count, pid: process.pid })
  const cleanly = (await clean).every(Boolean)
  process.exit(cleanly && !gaveUp ? 0 : 1)
}
