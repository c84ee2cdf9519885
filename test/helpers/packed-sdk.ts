// `npm pack` in sdk/ once per test process, unpacked as a consumer's node_modules would hold it.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const SDK_DIR = new URL('../../sdk/', import.meta.url).pathname

export interface PackedSdk {
  /** A directory with package.json and node_modules/@chorus/sdk, like a consumer project. */
  consumer: string
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
    const [info] = JSON.parse(await run(['npm', 'pack', '--json', '--pack-destination', consumer], SDK_DIR))
    const installed = join(consumer, 'node_modules/@chorus/sdk')
    await mkdir(installed, { recursive: true })
    await run(['tar', '-xzf', join(consumer, info.filename), '-C', installed, '--strip-components=1'], consumer)
    await writeFile(join(consumer, 'package.json'), JSON.stringify({ type: 'module', private: true }))
    return { consumer, filename: info.filename, files: info.files, entry: join(installed, 'dist/index.js') }
  })()
  return packed
}
