import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { discard, streamMultipart, streamToFile, type StreamedPart } from '../../lib/multipart-stream.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { ImportList, ImportParams, ImportPlan, ImportQuery, ImportResponse, ImportUpload } from './model.ts'
import { getImport, IMPORT_MAX_BYTES, importTempDir, listImports, receiveImport } from './service.ts'

const tags = ['Imports']
const ACCESS = { scope: 'imports:write', role: 'admin' } as const

/**
 * Streams the body to temporary files before validation: multipart parts by name, or a bare body as
 * `file` with the fields from the query. Whatever the outcome, afterResponse removes them.
 */
const importBody = (ctx: AppContext) => async ({ request }: { request: Request }) => {
  const directory = importTempDir(ctx)
  if (/^multipart\/form-data/i.test(request.headers.get('content-type') ?? '')) {
    const form = await streamMultipart(request, directory, IMPORT_MAX_BYTES)
    return { ...form.fields, ...form.files }
  }
  const query = Object.fromEntries(new URL(request.url).searchParams)
  return { ...query, file: await streamToFile(request.body, directory, IMPORT_MAX_BYTES) }
}

const partsOf = (body: unknown): Record<string, StreamedPart> =>
  Object.fromEntries(Object.entries((body ?? {}) as Record<string, unknown>).filter((entry): entry is [string, StreamedPart] => !!entry[1] && typeof entry[1] === 'object' && 'path' in (entry[1] as object)))

/** Imports from other feedback tools (docs/import.md). */
export const importsModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug' })
    .use(authPlugin(ctx))
    .post('/imports', async ({ workspace, member, body, set }) => {
      const fields = body as unknown as Record<string, unknown>
      const result = await receiveImport(ctx, workspace.id, {
        format: String(fields.format ?? ''), dryRun: fields.dry_run === true || fields.dry_run === 'true', board: typeof fields.board === 'string' ? fields.board : undefined,
        files: partsOf(body), userId: member?.userId ?? null,
      })
      set.status = result.dry_run ? 200 : 202
      return result
    }, {
      params: WorkspaceSlugParams,
      query: ImportQuery,
      parse: [importBody(ctx), 'multipart/form-data'],
      body: ImportUpload,
      afterResponse: ({ body }) => void discard(partsOf(body)),
      workspace: ACCESS,
      response: { 200: ImportPlan, 202: ImportResponse },
      detail: {
        operationId: 'createImport', tags, summary: 'Import posts, votes and comments from a file',
        description: 'Owner or admin (keys: `imports:write`). `format` = `csv` | `fider` | `canny` (docs/import.md describes each and its mapping). Files up to 100 MB each are streamed to disk, never held in memory (413 above). The whole file is checked first: one that is not what `format` says is 422 naming the line. `dry_run=true` answers 200 with what would be created, merged and skipped and the row-level errors, and writes nothing. Otherwise 202: a background job imports it (GET …/imports/{id} for status, counts, errors and progress), resumable after a crash and idempotent (a second run of the same file creates nothing). Original timestamps and vote counts are kept; statuses are matched by name, then kind; voters become unverified end users unless the source vouches for them. No event, webhook, notification or e-mail is sent for imported history.',
      },
    })
    .get('/imports', async ({ workspace }) => listImports(ctx, workspace.id), {
      params: WorkspaceSlugParams,
      workspace: ACCESS,
      response: { 200: ImportList },
      detail: { operationId: 'listImports', tags, summary: "The workspace's latest imports", description: 'The 50 most recent imports, newest first, each as GET …/imports/{id} answers it.' },
    })
    .get('/imports/:import_id', async ({ workspace, params }) => getImport(ctx, workspace.id, params.import_id), {
      params: ImportParams,
      workspace: ACCESS,
      response: { 200: ImportResponse },
      detail: { operationId: 'getImport', tags, summary: 'An import: status, counts, errors and progress', description: 'Counts per entity (created, merged, skipped) and `progress` grow with every committed batch; `errors` lists the first 100 row-level problems, `error_count` all. Another workspace\'s import is 404.' },
    })
