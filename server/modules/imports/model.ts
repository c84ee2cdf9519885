import { t } from 'elysia'
import { IMPORT_FORMATS } from '../../db/schema/index.ts'
import { Enum, Integer, Timestamp } from '../../lib/schema.ts'

const Format = Enum(IMPORT_FORMATS, { description: '`csv` (docs/import.md#csv), `fider` (Fider\'s backup.zip as it downloads it, or its tables as one JSON object) or `canny` (Canny\'s API objects as one JSON object)' })
const DryRun = t.Union([t.Boolean(), t.Literal('true'), t.Literal('false')], { description: 'true: answer what would be created, merged and skipped (200) and write nothing' })
const Board = t.String({ maxLength: 64, description: 'Board (slug or name) for posts that name none (all of Fider\'s); default the first board, or a new "Feedback" board' })
/** A streamed file part: documented as binary, received by the parse hook as a temporary file on disk. */
const FilePart = (description: string) => t.Any({ type: 'string', format: 'binary', description } as never)

export const ImportUpload = t.Object({
  format: Format,
  file: FilePart('The file to import (≤ 100 MB): for CSV the posts file'),
  votes: t.Optional(FilePart('CSV only: a separate votes file (post_id, voter_email, voter_name, voter_id, created_at)')),
  comments: t.Optional(FilePart('CSV only: a separate comments file (id, post_id, parent_id, author_email, author_name, author_id, body, internal, created_at)')),
  dry_run: t.Optional(DryRun),
  board: t.Optional(Board),
}, { $id: 'ImportUpload', description: 'multipart/form-data; or the file itself as the body (application/json, text/csv) with `format`, `dry_run` and `board` in the query' })

export const ImportQuery = t.Object({
  format: t.Optional(Format),
  dry_run: t.Optional(DryRun),
  board: t.Optional(Board),
})

export const ImportParams = t.Object({ workspace_slug: t.String({ maxLength: 64, examples: ['acme'] }), import_id: t.String({ maxLength: 64, examples: ['imp_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

const Count = t.Object({ created: Integer({ minimum: 0 }), merged: Integer({ minimum: 0 }), skipped: Integer({ minimum: 0 }) })
const Counts = t.Record(t.String(), Count, { description: 'Per entity (posts, votes, comments, users, companies, boards, statuses, labels, post_labels, changelog_entries): rows created, merged into an existing row (same e-mail, external id, board or status name), and skipped (already imported by an earlier run, or a duplicate in the file)' })
const RowError = t.Object({ file: t.String({ description: 'The part: file, votes or comments' }), line: Integer({ minimum: 1 }), message: t.String() })
const Errors = t.Array(RowError, { description: 'Row-level problems (first 100); such rows are left out, the rest is imported' })

const countsExample = { posts: { created: 3, merged: 0, skipped: 0 }, votes: { created: 5, merged: 0, skipped: 0 }, comments: { created: 2, merged: 0, skipped: 0 }, users: { created: 4, merged: 1, skipped: 0 } }

export const ImportResponse = t.Object({
  id: t.String({ examples: ['imp_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  format: Format,
  status: Enum(['queued', 'running', 'completed', 'failed'], { description: 'queued until a background worker claims it; running (resumed from its last committed batch after a crash); completed; failed after 3 attempts that threw' }),
  dry_run: t.Literal(false),
  counts: Counts,
  errors: Errors,
  error_count: Integer({ minimum: 0 }),
  progress: t.Object({
    pass: t.Nullable(t.String({ description: 'The entity being imported now (passes run in dependency order)' })),
    passes_done: Integer({ minimum: 0 }),
    passes_total: Integer({ minimum: 1 }),
    records_in_pass: Integer({ minimum: 0, description: 'Records of the current pass committed so far' }),
    percent: Integer({ minimum: 0, maximum: 100 }),
  }),
  bytes: Integer({ minimum: 0 }),
  failure: t.Nullable(t.String()),
  attempts: Integer({ minimum: 0 }),
  created_at: Timestamp,
  started_at: t.Nullable(Timestamp),
  finished_at: t.Nullable(Timestamp),
}, {
  $id: 'Import',
  examples: [{ id: 'imp_0mi9x2k3aq1b2c3d4e5f6g7h8', format: 'csv', status: 'completed', dry_run: false, counts: countsExample, errors: [{ file: 'file', line: 7, message: 'title is empty' }], error_count: 1,
    progress: { pass: null, passes_done: 3, passes_total: 3, records_in_pass: 3, percent: 100 }, bytes: 2048, failure: null, attempts: 1, created_at: '2026-11-28T09:00:00.000Z', started_at: '2026-11-28T09:00:00.100Z', finished_at: '2026-11-28T09:00:01.000Z' }],
})

export const ImportPlan = t.Object({
  dry_run: t.Literal(true),
  format: Format,
  status: t.Literal('planned'),
  records: t.Record(t.String(), Integer({ minimum: 0 }), { description: 'Records read per part or section of the file' }),
  counts: Counts,
  errors: Errors,
  error_count: Integer({ minimum: 0 }),
}, { $id: 'ImportPlan', examples: [{ dry_run: true, format: 'csv', status: 'planned', records: { file: 3 }, counts: countsExample, errors: [], error_count: 0 }] })

export const ImportList = t.Object({ items: t.Array(ImportResponse) }, { $id: 'ImportList', examples: [{ items: ImportResponse.examples }] })
