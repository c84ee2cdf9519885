// `npm run import -- --workspace acme --from fider backup.zip`: an operator's import, on the configured
// database (the same configuration as `npm start`), through the same checks, job row and runner as
// POST /workspaces/{slug}/imports (docs/import.md). It runs the job itself and prints its progress; if
// it dies, a server's background worker (or the next run of this command) resumes the job.
//   --from csv|fider|canny   the format
//   --votes FILE --comments FILE   CSV only: the separate votes and comments files
//   --board SLUG             board for posts that name none
//   --dry-run                print what would be created, merged and skipped; write nothing
// For Fider, the path is Fider's backup.zip (streamed, as over HTTP) or the directory it was unzipped to:
// its table files are then read as one object.
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { eq } from 'drizzle-orm'
import { LOCK_SPACE, lockOwnerSql, newOwner } from '../server/background/leases.ts'
import { imports } from '../server/db/schema/index.ts'
import { ApiError } from '../server/errors.ts'
import { streamToFile, type StreamedPart } from '../server/lib/multipart-stream.ts'
import { createStorage } from '../server/lib/storage.ts'
import { FIDER_TABLES } from '../server/modules/imports/fider.ts'
import { claimImport } from '../server/modules/imports/claim.ts'
import { runImport } from '../server/modules/imports/runner.ts'
import { IMPORT_MAX_BYTES, importTempDir, receiveImport, toImportResponse, workspaceIdBySlug } from '../server/modules/imports/service.ts'
import { configOrExit, openMigratedDatabase } from '../server/startup.ts'

/** An unzipped Fider backup as one JSON object, streamed table file by table file. */
function fiderDirectory(directory: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    async start(controller) {
      const present = new Set(await readdir(directory))
      const tables = FIDER_TABLES.filter((table) => present.has(`${table}.json`))
      controller.enqueue(encoder.encode('{'))
      for (const [index, table] of tables.entries()) {
        controller.enqueue(encoder.encode(`${index ? ',' : ''}${JSON.stringify(table)}:`))
        for await (const chunk of Bun.file(join(directory, `${table}.json`)).stream() as unknown as AsyncIterable<Uint8Array>) controller.enqueue(chunk)
      }
      controller.enqueue(encoder.encode('}'))
      controller.close()
    },
  })
}

async function main() {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    options: { workspace: { type: 'string' }, from: { type: 'string' }, votes: { type: 'string' }, comments: { type: 'string' }, board: { type: 'string' }, 'dry-run': { type: 'boolean' } },
    allowPositionals: true,
  })
  if (!values.workspace || !values.from || positionals.length !== 1) {
    console.error('usage: npm run import -- --workspace SLUG --from csv|fider|canny [--votes FILE] [--comments FILE] [--board SLUG] [--dry-run] FILE')
    process.exit(64)
  }
  const config = configOrExit(process.env)
  const database = await openMigratedDatabase(config, 'import script')
  const ctx = { db: database.db, storage: createStorage(config), config }
  try {
    const workspaceId = await workspaceIdBySlug(ctx, values.workspace)
    if (!workspaceId) throw new Error(`no workspace "${values.workspace}"`)
    // Copies, streamed: the import keeps and later removes its own files, never the operator's.
    const files: Record<string, StreamedPart> = {}
    const path = positionals[0]!
    const isDirectory = values.from === 'fider' && (await stat(path)).isDirectory()
    files.file = await streamToFile(isDirectory ? fiderDirectory(path) : Bun.file(path).stream(), importTempDir(ctx), IMPORT_MAX_BYTES)
    for (const part of ['votes', 'comments'] as const) if (values[part]) files[part] = await streamToFile(Bun.file(values[part]!).stream(), importTempDir(ctx), IMPORT_MAX_BYTES)
    const received = await receiveImport(ctx, workspaceId, { format: values.from, dryRun: values['dry-run'] === true, board: values.board, files, userId: null })
    if (received.dry_run) return void console.log(JSON.stringify(received, null, 2))
    const owner = newOwner()
    // The owner lock marks this run as live, so a server's worker does not take the job over meanwhile.
    await database.sql.rows(lockOwnerSql(owner))
    const job = await claimImport(database.db, owner, LOCK_SPACE)
    if (job?.id !== received.id) throw new Error(`import ${received.id} was claimed by a server's worker: follow it with GET /workspaces/${values.workspace}/imports/${received.id}`)
    const finished = await runImport(database.db, ctx.storage, job, owner, { afterBatch: (records) => console.error(`… ${records} records`) })
    const [row] = await database.db.select().from(imports).where(eq(imports.id, received.id))
    console.log(JSON.stringify(toImportResponse(row!), null, 2))
    if (!finished) process.exitCode = 75
  } catch (error) {
    console.error(error instanceof ApiError ? `${error.code}: ${error.message}${error.issues ? ` ${error.issues.map((issue) => issue.msg).join('; ')}` : ''}` : String(error))
    process.exitCode = 1
  } finally {
    await database.close()
  }
}

if (import.meta.main) await main()

