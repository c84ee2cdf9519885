import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'

// A fresh embedded database spends most of its first start in PostgreSQL's initdb (inside PGlite's
// WASM) and in applying every migration, 20 s or more on a busy 2-core machine (BENCHMARKS.md,
// "Start-up"). A template is that work done once, at install time (`npm run db:template`, run by
// postinstall and in the Docker build): a tarball of a migrated data directory, which a fresh
// DATA_DIR is unpacked from. It is keyed by the PGlite version and the migrations (journal and SQL), so a
// template from another version is never used (the start falls back to initdb); migrations still run
// after it, so a template is only ever a head start.

const ROOT = new URL('../..', import.meta.url).pathname
const MIGRATIONS_JOURNAL = `${import.meta.dir}/migrations/meta/_journal.json`

/** Where templates are kept: a cache beside the installed packages, never in DATA_DIR or the repository. */
export const TEMPLATE_DIR = `${ROOT}node_modules/.cache/chorus`

export function templateKey(): string {
  const pglite = (JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')), 'utf8')) as { version: string }).version
  const hash = createHash('sha256').update(pglite).update('\0').update(readFileSync(MIGRATIONS_JOURNAL))
  // The migrations' own text too: an edited migration (in development) must not reuse a stale template.
  const migrations = `${import.meta.dir}/migrations`
  for (const name of readdirSync(migrations).filter((file) => file.endsWith('.sql')).sort()) hash.update('\0').update(readFileSync(`${migrations}/${name}`))
  return hash.digest('hex').slice(0, 16)
}

export const templatePath = () => `${TEMPLATE_DIR}/pglite-${templateKey()}.tar.gz`

/** The template for this PGlite and these migrations, if one was made. */
export function freshDataTemplate(): Blob | undefined {
  const path = templatePath()
  return existsSync(path) ? new Blob([readFileSync(path)]) : undefined
}

/** True when PGlite has not created its data directory there yet (no PG_VERSION). */
export const isFreshDataDirectory = (directory: string) => !existsSync(directory) || !readdirSync(directory).includes('PG_VERSION')

/** How many migrations the repository has (the M of "migrating N/M"). */
export const migrationCount = () => (JSON.parse(readFileSync(MIGRATIONS_JOURNAL, 'utf8')) as { entries: unknown[] }).entries.length
