// The documented CSV format (docs/import.md#csv): a posts file, with `voters` and `comments` columns,
// or with separate votes and comments files (parts `votes` and `comments`). A header row names the
// columns in any order; unknown columns are ignored.
import { csvRecords, FormatError, textChunks } from '../../lib/text-stream.ts'
import { isoDate, rowError, text, type ImportRecord, type OpenPart, type Person, type RecordKind, type Source } from './records.ts'

const REQUIRED: Record<string, string[][]> = {
  file: [['title']],
  votes: [['post_id'], ['voter_email', 'voter_id']],
  comments: [['post_id'], ['body']],
}

type Row = Record<string, string>

/** The rows of one CSV part as objects keyed by its header; the header row itself is checked against REQUIRED. */
async function* rowsOf(stream: ReadableStream<Uint8Array>, part: string): AsyncGenerator<{ line: number; row: Row }> {
  let header: string[] | null = null
  for await (const record of csvRecords(textChunks(stream))) {
    if (!header) {
      header = record.fields.map((name) => name.trim().toLowerCase())
      for (const anyOf of REQUIRED[part] ?? []) {
        if (!anyOf.some((name) => header!.includes(name))) throw new FormatError(record.line, `the ${part === 'file' ? 'posts' : part} CSV header has no "${anyOf.join('" or "')}" column`)
      }
      continue
    }
    if (record.fields.length > header.length) throw new FormatError(record.line, `${record.fields.length} fields where the header names ${header.length}`)
    const row: Row = {}
    header.forEach((name, index) => (row[name] = record.fields[index] ?? ''))
    yield { line: record.line, row }
  }
  if (!header) throw new FormatError(1, 'the file is empty: a CSV header row was expected')
}

const person = (row: Row, prefix: string): Person | null => {
  const email = text(row[`${prefix}_email`])?.trim().toLowerCase() ?? null
  const externalId = text(row[`${prefix}_id`])
  if (!email && !externalId) return null
  // A customer's own user id is theirs to vouch for (as identify's JWT is); an e-mail alone is not.
  return { ref: externalId ? `id:${externalId}` : `email:${email}`, externalId, email, name: text(row[`${prefix}_name`]), verified: !!externalId }
}

/** A post's source id: its `id` column, else a digest of what identifies it (stable across runs of the same file). */
const postRef = (row: Row) => text(row.id) ?? `h:${Bun.hash(`${row.title}\u0000${row.created_at ?? ''}\u0000${row.author_email ?? ''}`).toString(36)}`

const list = (value: string | undefined) => (value ?? '').split('|').map((item) => item.trim()).filter(Boolean)

function post(line: number, row: Row, board: string | undefined): ImportRecord {
  const title = text(row.title)?.trim()
  if (!title) return rowError(line, 'title is empty')
  const createdAt = row.created_at ? isoDate(row.created_at) : new Date(0).toISOString()
  if (!createdAt) return rowError(line, `created_at "${row.created_at}" is not a date`)
  const voteCount = row.vote_count ? Number(row.vote_count) : 0
  if (!Number.isInteger(voteCount) || voteCount < 0) return rowError(line, `vote_count "${row.vote_count}" is not a whole number`)
  const boardName = text(row.board)?.trim() ?? board ?? null
  return {
    kind: 'post', line, ref: postRef(row), title: title.slice(0, 300), body: row.body ?? '', status: text(row.status), author: person(row, 'author'),
    board: { ref: null, name: boardName ?? '' }, createdAt, voteCount, labels: list(row.labels),
  }
}

function vote(line: number, postRef: string, voter: Person | null, createdAt: string | undefined): ImportRecord {
  if (!voter) return rowError(line, 'a vote needs voter_email or voter_id')
  return { kind: 'vote', line, postRef, voter, createdAt: isoDate(createdAt) ?? new Date(0).toISOString() }
}

function comment(line: number, postRef: string, row: Row, ref: string): ImportRecord {
  const body = text(row.body)
  if (!body) return rowError(line, 'a comment needs a body')
  return {
    kind: 'comment', line, ref, postRef, parentRef: text(row.parent_id), author: person(row, 'author'), body,
    internal: /^(true|1|yes)$/i.test(row.internal ?? ''), createdAt: isoDate(row.created_at) ?? new Date(0).toISOString(),
  }
}

/** The `comments` column of a posts row: a JSON array of {author_email, author_name, author_id, body, created_at, internal}. */
function* inlineComments(line: number, row: Row): Generator<ImportRecord> {
  if (!row.comments?.trim()) return
  let items: unknown
  try { items = JSON.parse(row.comments) } catch { items = null }
  if (!Array.isArray(items)) return yield rowError(line, 'the comments column is not a JSON array')
  for (const [index, item] of items.entries()) {
    if (!item || typeof item !== 'object') { yield rowError(line, `comment ${index + 1} is not an object`); continue }
    const fields = Object.fromEntries(Object.entries(item).map(([key, value]) => [key, value === null || value === undefined ? '' : String(value)]))
    yield comment(line, postRef(row), fields, `${postRef(row)}#${index}`)
  }
}

export function csvSource(options: { board?: string }): Source {
  return {
    passes: ['post', 'vote', 'comment'],
    async *read(pass: RecordKind, open: OpenPart) {
      const separate = pass === 'vote' ? await open('votes') : pass === 'comment' ? await open('comments') : null
      if (separate) {
        const file = pass === 'vote' ? 'votes' : 'comments'
        for await (const { line, row } of rowsOf(separate, file)) {
          const ref = text(row.post_id) ?? ''
          yield { file, ...(pass === 'vote' ? vote(line, ref, person(row, 'voter'), row.created_at) : comment(line, ref, row, text(row.id) ?? `${ref}@${line}`)) }
        }
        return
      }
      const posts = await open('file')
      if (!posts) return
      for await (const { line, row } of rowsOf(posts, 'file')) {
        if (pass === 'post') yield { file: 'file', ...post(line, row, options.board) }
        else if (pass === 'vote') {
          for (const email of list(row.voters)) yield { file: 'file', ...vote(line, postRef(row), { ref: `email:${email.toLowerCase()}`, email: email.toLowerCase() }, row.created_at) }
        } else if (pass === 'comment') for (const record of inlineComments(line, row)) yield { file: 'file', ...record }
      }
    },
    async check(open) {
      const counts: Record<string, number> = {}
      for (const part of ['file', 'votes', 'comments']) {
        const stream = await open(part)
        if (!stream) continue
        counts[part] = 0
        for await (const _ of rowsOf(stream, part)) counts[part]++
      }
      return counts
    },
  }
}
