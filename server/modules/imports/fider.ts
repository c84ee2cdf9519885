// Fider's backup (Site settings → Export → backup.zip; getfider/fider app/pkg/backup): a zip with one
// `<table>.json` per table (a JSON array of the tenant's rows, columns as the database names them, written
// by Go's archive/zip with data descriptors) and `blobs/<key>` files. The zip is streamed and read as
// one object keyed by table name (`{"users": [...], "posts": [...], ...}`), which is also accepted as
// is (scripts/import.ts builds it from an unzipped backup directory). Mapping: docs/import.md#fider.
import { FormatError } from '../../lib/text-stream.ts'
import { looksLikeZip, zipPieces } from '../../lib/zip-stream.ts'
import { jsonSource, type Item } from './json-source.ts'
import { IMPORT_MAX_BYTES, isoDate, rowError, text, type OpenPart, type Person, type Source, type StatusKindName } from './records.ts'

/** The tables of Fider's backup.zip an import reads. */
export const FIDER_TABLES = ['users', 'tags', 'posts', 'post_tags', 'comments', 'post_votes']
/** Fider's backup always holds these (every table, even empty, is written as `[]`): a zip without them is not one. */
const BACKUP_MUST_HOLD = ['tenants.json', 'users.json', 'posts.json', 'post_votes.json']

/** Fider's backup.zip, streamed, as the one JSON object of its tables; a file that is not a zip passes through. */
async function* backupAsObject(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = (stream as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
  const first = await reader.next()
  if (first.done) return
  const rest = { [Symbol.asyncIterator]: () => reader }
  if (!looksLikeZip(first.value)) {
    yield first.value
    return yield* rest
  }
  const chunks = (async function* () {
    yield first.value
    yield* rest
  })()
  const encode = (text: string) => new TextEncoder().encode(text)
  const seen = new Set<string>()
  let current: string | null = null
  yield encode('{')
  for await (const piece of zipPieces(chunks, IMPORT_MAX_BYTES)) {
    seen.add(piece.entry)
    const table = piece.entry.endsWith('.json') ? piece.entry.slice(0, -5) : ''
    if (!FIDER_TABLES.includes(table)) continue
    if (current !== piece.entry) yield encode(`${current ? ',' : ''}${JSON.stringify(table)}:`)
    current = piece.entry
    yield piece.data
  }
  const missing = BACKUP_MUST_HOLD.filter((name) => !seen.has(name))
  if (missing.length) throw new FormatError(1, `this zip is not a Fider backup: it has no ${missing.join(', ')} (Fider's backup.zip holds one <table>.json per table)`)
  yield encode('}')
}

/** `open` with a Fider backup.zip read as its tables' JSON object. */
const backupOpener = (open: OpenPart): OpenPart => async (part) => {
  const stream = await open(part)
  if (!stream) return null
  const pieces = backupAsObject(stream)
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await pieces.next()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel() {
      await pieces.return(undefined)
    },
  })
}

/** Fider's post status enum (app/models/enum/post_status.go). */
const FIDER_STATUS: Record<number, [string, StatusKindName] | null> = {
  0: ['Open', 'open'], 1: ['Started', 'in_progress'], 2: ['Completed', 'complete'], 3: ['Declined', 'closed'],
  4: ['Planned', 'planned'], 5: ['Duplicate', 'closed'], 6: null,
}

const id = (value: unknown) => (value === null || value === undefined ? null : String(value))
// Every Fider account was confirmed by an e-mail link or an OAuth sign-in: Fider vouches for it.
const user = (ref: unknown): Person => ({ ref: id(ref), verified: true })

export function fiderSource(options: { board?: string }): Source {
  const board = { ref: null, name: options.board ?? '' }
  const source = jsonSource('Fider backup', 'posts', {
    user: {
      users: (item: Item, line) => {
        if (item.status === 2) return null // deleted account
        if (id(item.id) === null) return rowError(line, 'a user without an id')
        return { kind: 'user', line, person: { ref: id(item.id), email: text(item.email)?.toLowerCase() ?? null, name: text(item.name), verified: true, createdAt: isoDate(item.created_at) } }
      },
    },
    label: {
      tags: (item: Item, line) => (id(item.id) && text(item.name) ? { kind: 'label', line, ref: id(item.id)!, name: item.name, color: text(item.color) ? `#${String(item.color).replace(/^#/, '')}` : null } : rowError(line, 'a tag needs an id and a name')),
    },
    post: {
      posts: (item: Item, line) => {
        const status = FIDER_STATUS[Number(item.status ?? 0)]
        if (status === null) return null // deleted post
        if (id(item.id) === null || !text(item.title)) return rowError(line, 'a post needs an id and a title')
        const createdAt = isoDate(item.created_at)
        if (!createdAt) return rowError(line, `created_at "${item.created_at}" is not a date`)
        return {
          kind: 'post', line, ref: id(item.id)!, board, title: String(item.title).slice(0, 300), body: text(item.description) ?? '',
          status: status?.[0] ?? null, statusKind: status?.[1] ?? 'open', author: item.user_id == null ? null : user(item.user_id), createdAt, voteCount: 0, labels: [],
        }
      },
    },
    post_label: {
      post_tags: (item: Item, line) => (id(item.post_id) && id(item.tag_id) ? { kind: 'post_label', line, postRef: id(item.post_id)!, labelRef: id(item.tag_id)! } : rowError(line, 'a post tag needs post_id and tag_id')),
    },
    comment: {
      comments: (item: Item, line) => {
        if (item.deleted_at) return null
        if (id(item.id) === null || id(item.post_id) === null || !text(item.content)) return rowError(line, 'a comment needs id, post_id and content')
        return { kind: 'comment', line, ref: id(item.id)!, postRef: id(item.post_id)!, author: item.user_id == null ? null : user(item.user_id), body: item.content, internal: false, createdAt: isoDate(item.created_at) ?? new Date(0).toISOString() }
      },
    },
    vote: {
      post_votes: (item: Item, line) => (id(item.post_id) && id(item.user_id)
        ? { kind: 'vote', line, postRef: id(item.post_id)!, voter: user(item.user_id), createdAt: isoDate(item.created_at) ?? new Date(0).toISOString() }
        : rowError(line, 'a vote needs post_id and user_id')),
    },
  })
  return { ...source, read: (pass, open) => source.read(pass, backupOpener(open)), check: (open) => source.check(backupOpener(open)) }
}
