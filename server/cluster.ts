// One server process per core on PostgreSQL (WEB_CONCURRENCY). This supervisor starts that many copies
// of the server, each listening on the same port with SO_REUSEPORT so the kernel spreads connections
// across them, restarts one that dies, and passes SIGTERM/SIGINT on. It opens no database and holds no
// state: what the processes must agree on lives in PostgreSQL (rate limits, delivery leases, wake-ups)
// or Redis. The embedded database (PGlite) belongs to one process, so it always runs one.
import { totalmem } from 'node:os'
import type { Config } from './config.ts'
import type { Logger } from './lib/log.ts'

/** Set in the environment of each supervised process (its index), so it serves instead of supervising. */
export const PROCESS_INDEX_ENV = 'CHORUS_PROCESS_INDEX'

const RESTART_MIN_MS = 200
const RESTART_MAX_MS = 30_000

const usesPostgres = (config: Config) => config.databaseUrl !== undefined && /^postgres(ql)?:/.test(config.databaseUrl)

/** How many server processes to run: WEB_CONCURRENCY, else the core count; 1 for PGlite or a random port. */
export function processCount(config: Config, cores = navigator.hardwareConcurrency || 1): number {
  if (!usesPostgres(config) || config.port === 0) return 1
  return config.webConcurrency || cores
}

/**
 * How much memory JavaScriptCore is told the machine has (bytes); it sizes its heap from that. Bun's
 * counterpart of Node's --max-old-space-size, though not a cap: on a machine of 16 GiB or more a server
 * process under list load lets its heap reach ~85 MiB between collections (peak RSS ~186 MiB); told
 * 256 MiB to 8 GiB it collects at ~40 MiB (peak ~145 MiB) at a throughput cost within the benchmark's
 * spread (BENCHMARKS.md, "Notes: memory"). Set by `npm start`, the Docker image, the supervisor for its
 * processes and the benchmarks; an operator's own value wins.
 */
export const HEAP_RAM_ENV = 'BUN_JSC_forceRAMSize'
export const DEFAULT_HEAP_RAM = 1024 ** 3

/** The heap-size setting a server process starts with: the operator's, else 1 GiB (or the machine's RAM when it has less). */
export const heapEnv = (env: Record<string, string | undefined>): Record<string, string> =>
  ({ [HEAP_RAM_ENV]: env[HEAP_RAM_ENV] || String(Math.min(DEFAULT_HEAP_RAM, totalmem())) })

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

  const start = (index: number) => {
    const startedAt = Date.now()
    const child = Bun.spawn([process.execPath, ...process.argv.slice(1)], {
      env: { ...process.env, ...env, ...heapEnv(process.env), [PROCESS_INDEX_ENV]: String(index) },
      // The child watches this pipe: when the supervisor is gone (even SIGKILLed) it reads end-of-file and stops.
      stdio: ['pipe', 'inherit', 'inherit'],
      onExit(_, code, signal) {
        running.delete(index)
        if (stopping) return
        // A process that ran a minute is restarted at once; one that keeps dying, ever more slowly.
        const delay = Date.now() - startedAt > 60_000 ? RESTART_MIN_MS : Math.min((delays.get(index) ?? RESTART_MIN_MS / 2) * 2, RESTART_MAX_MS)
        delays.set(index, delay)
        log.warn('server process exited; restarting', { process: index, code, signal, in_ms: delay })
        setTimeout(() => { if (!stopping) start(index) }, delay)
      },
    })
    running.set(index, child)
  }

  for (let index = 0; index < count; index++) start(index)
  log.info('chorus supervising', { processes: count, pid: process.pid })

  const clean = await new Promise<boolean[]>((resolve) => {
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
  })
  process.exit(clean.every(Boolean) ? 0 : 1)
}
