// Run by postinstall: applies patches/ (fixes to installed packages that no release carries yet; see
// docs/postgres-js-rollback-crash.md) with patch-package, which fails the install when a patch no longer
// applies. A development install has patch-package (a dev dependency); a production install
// (`npm ci --omit=dev`) does not, and runs the lockfile's version through npx, so no runtime package depends
// on it. docker/Dockerfile applies the same patches in its deps stage.
import { existsSync } from 'node:fs'

const root = new URL('..', import.meta.url).pathname
const installed = `${root}node_modules/.bin/patch-package`
const lockfile = await Bun.file(`${root}package-lock.json`).json() as { packages: Record<string, { version: string }> }
const version = lockfile.packages['node_modules/patch-package']!.version
const command = existsSync(installed) ? [installed, '--error-on-fail'] : ['npx', '--yes', `patch-package@${version}`, '--error-on-fail']
const run = Bun.spawnSync(command, { cwd: root, stdout: 'inherit', stderr: 'inherit' })
process.exit(run.exitCode ?? 1)
