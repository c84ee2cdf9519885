// `bun bench/startup.ts`: how long `bun server/index.ts` takes to answer /health, on a fresh DATA_DIR
// (from the install's template when `npm run db:template` made one) and on a reopened one, each the
// median of RUNS starts. Figures in BENCHMARKS.md ("Start-up").
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { templatePath } from '../server/db/template.ts'
import { freePort } from '../test/helpers/ports.ts'

const RUNS = Number(process.env.RUNS ?? 3)
const ROOT = new URL('..', import.meta.url).pathname

async function timeToHealth(dataDir: string) {
  const port = freePort()
  const began = performance.now()
  const child = Bun.spawn([process.execPath, 'server/index.ts'], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', SECRET_KEY: 'bench-secret-key-that-is-long-enough-0123456789' }, stdout: 'ignore', stderr: 'inherit' })
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then((res) => res.ok, () => false)
    if (ok) break
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
    await Bun.sleep(50)
  }
  const seconds = (performance.now() - began) / 1000
  child.kill('SIGTERM')
  await child.exited
  return seconds
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const fresh: number[] = []
const reopened: number[] = []
for (let run = 0; run < RUNS; run++) {
  const dir = await mkdtemp(`${tmpdir()}/chorus-bench-start-`)
  fresh.push(await timeToHealth(dir))
  reopened.push(await timeToHealth(dir))
  await rm(dir, { recursive: true, force: true })
}
console.log(JSON.stringify({ template: await Bun.file(templatePath()).exists(), runs: RUNS, fresh_s: median(fresh).toFixed(2), reopened_s: median(reopened).toFixed(2), fresh_all: fresh.map((s) => s.toFixed(2)), reopened_all: reopened.map((s) => s.toFixed(2)) }))
