// `npm run bench`: every benchmark, one after another (they load the same cores, so never in parallel).
// Add a new benchmark by adding its file name here; each one rewrites its own section of BENCHMARKS.md.
const BENCHMARKS = ['http', 'webhooks', 'export', 'posts', 'portal', 'idle']

const only = process.argv.slice(2)
const failed: string[] = []
for (const name of BENCHMARKS.filter((name) => only.length === 0 || only.includes(name))) {
  console.log(`\n=== bench/${name}.ts ===`)
  const child = Bun.spawn([process.execPath, `bench/${name}.ts`], { cwd: new URL('..', import.meta.url).pathname, stdout: 'inherit', stderr: 'inherit', env: process.env })
  if ((await child.exited) !== 0) failed.push(name)
}
if (failed.length) {
  console.error(`failed: ${failed.join(', ')}`)
  process.exit(1)
}
