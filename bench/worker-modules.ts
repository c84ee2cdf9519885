// What each module costs a worker thread: a fresh process per module, with the server's engine settings
// (server/cluster.ts engineEnv), starts a Bun Worker that imports only that module, collects garbage in
// both threads and reports the process RSS; the figure is against a Worker that imports nothing. The
// modules are what the background worker's graph could load (nodemailer, markdown-it, drizzle, the
// drivers, the importer, ...), so the table says what making one lazy saves.
// BENCH_THREAD=main imports each module on the main thread instead (against a process importing nothing):
// what the server's own thread pays for a module it loads at start.
// Usage: bun bench/worker-modules.ts [module ...]   (BENCH_ROUNDS, default 3; median reported)
import { engineEnv } from '../server/cluster.ts'

const ROOT = new URL('..', import.meta.url).pathname
const DEFAULT = [
  'postgres', 'drizzle-orm', 'drizzle-orm/postgres-js', 'drizzle-orm/pglite', '@electric-sql/pglite', 'nodemailer', 'markdown-it',
  './server/db/schema/index.ts', './server/db/client.ts', './server/lib/mail.ts', './server/lib/markdown.ts', './server/background/worker.ts',
]

if (process.argv[2] === 'child') {
  const target = process.argv[3]!
  const specifier = target.startsWith('./') ? `${ROOT}${target.slice(2)}` : target
  const source = target === '(nothing)'
    ? `self.onmessage = () => {}; postMessage('ready')`
    : `await import(${JSON.stringify(specifier)}); Bun.gc(true); postMessage('ready')`
  if (process.env.BENCH_THREAD === 'main') {
    if (target !== '(nothing)') await import(specifier)
  } else {
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'application/typescript' })))
    await new Promise((resolve) => (worker.onmessage = resolve))
  }
  await Bun.sleep(1000)
  Bun.gc(true)
  await Bun.sleep(300)
  console.log(Number(/VmRSS:\s+(\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024)
  process.exit(0)
}

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const targets = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT
async function rss(target: string) {
  const values: number[] = []
  for (let i = 0; i < rounds; i++) {
    const child = Bun.spawn([process.execPath, `${ROOT}bench/worker-modules.ts`, 'child', target], { cwd: ROOT, env: { ...process.env, ...engineEnv(process.env) }, stdout: 'pipe', stderr: 'inherit' })
    values.push(Number((await new Response(child.stdout).text()).trim().split('\n').at(-1)))
  }
  return values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
}
const base = await rss('(nothing)')
const where = process.env.BENCH_THREAD === 'main' ? ['the main thread', 'a process importing nothing'] : ['a Worker', 'empty Worker']
console.log(`| module imported by ${where[0]} | extra RSS (${where[1]} ${base.toFixed(1)} MiB) |\n|---|---|`)
for (const target of targets) console.log(`| ${target} | +${((await rss(target)) - base).toFixed(1)} MiB |`)
