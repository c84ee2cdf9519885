// `npm run sdk:pack` once per test process, installed with `npm install ./chorus-sdk-x.y.z.tgz` into a
// fresh project: what the README tells users to do until the package is published.
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = new URL('../../', import.meta.url).pathname

export interface PackedSdk {
  /** A directory with package.json and node_modules/@chorus/sdk, like a consumer project. */
  consumer: string
  /** The tarball's path. */
  tarball: string
  filename: string
  files: { path: string }[]
  /** The unpacked package's ESM entry, to import in this process. */
  entry: string
}

/** Asynchronous, so a server in this process can answer the child meanwhile. */
export async function run(command: string[], cwd: string, env: Record<string, string> = {}) {
  const child = Bun.spawn(command, { cwd, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (exitCode !== 0) throw new Error(`${command.join(' ')} failed (${exitCode}):\n${stdout}\n${stderr}`)
  return stdout
}

let packed: Promise<PackedSdk> | undefined

export function packedSdk(): Promise<PackedSdk> {
  packed ??= (async () => {
    const consumer = await mkdtemp(join(tmpdir(), 'chorus-sdk-pack-'))
    // The later --pack-destination wins, so the tarball lands in the temporary project, not the repository.
    const output = await run(['npm', 'run', '--silent', 'sdk:pack', '--', '--json', '--pack-destination', consumer], ROOT)
    const [info] = JSON.parse(output.slice(output.indexOf('[')))
    await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }))
    await run(['npm', 'install', '--no-audit', '--no-fund', '--offline', `./${info.filename}`], consumer)
    const installed = join(consumer, 'node_modules/@chorus/sdk')
    return { consumer, tarball: join(consumer, info.filename), filename: info.filename, files: info.files, entry: join(installed, 'dist/index.js') }
  })()
  return packed
}
