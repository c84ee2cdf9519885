import postgres from 'postgres'
import { openDatabase, type Database, type DatabaseOptions } from '../../server/db/client.ts'
import { freshDataTemplate } from '../../server/db/template.ts'

let template: Promise<Blob> | undefined

/**
 * Migrating PGlite takes seconds; each test file starts from one migrated data directory instead: the
 * install's template when it matches these migrations (server/db/template.ts), else one made here.
 */
function migratedTemplate() {
  template ??= (async () => {
    const installed = freshDataTemplate()
    if (installed) return installed
    const database = openDatabase('memory://', '')
    await database.migrate()
    const dump = await database.dumpDataDir!()
    await database.close()
    return dump
  })()
  return template
}

/**
 * A migrated, empty database for one test file: throwaway PGlite by default, or a fresh database on
 * the Postgres server named by TEST_POSTGRES_URL (CI runs the suite both ways).
 */
export async function testDatabase(options: DatabaseOptions = {}): Promise<{ database: Database; url: string; drop(): Promise<void> }> {
  const admin = process.env.TEST_POSTGRES_URL
  if (!admin) {
    const database = openDatabase('memory://', '', { ...options, loadDataDir: await migratedTemplate() })
    await database.migrate()
    return { database, url: 'memory://', drop: () => database.close() }
  }
  const name = `chorus_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const server = postgres(admin, { max: 1, onnotice: () => {} })
  await server.unsafe(`create database ${name}`)
  const url = new URL(admin)
  url.pathname = `/${name}`
  const database = openDatabase(url.toString(), '', options)
  await database.migrate()
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.close()
      await server.unsafe(`drop database if exists ${name} with (force)`)
      await server.end()
    },
  }
}
