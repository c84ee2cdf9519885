// Fider's backup (Admin → Export → backup.zip, getfider/fider app/pkg/backup): one JSON array per table,
// rows as the database holds them. Chorus reads them as one object keyed by table name
// (`{"users": [...], "posts": [...], ...}`; scripts/import.ts builds it from an unzipped backup).
// Mapping: docs/import.md#fider.
import { jsonSource, type Item } from './json-source.ts'
import { isoDate, rowError, text, type Person, type StatusKindName } from './records.ts'

/** Fider's post status enum (app/models/enum/post_status.go). */
const FIDER_STATUS: Record<number, [string, StatusKindName] | null> = {
  0: ['Open', 'open'], 1: ['Started', 'in_progress'], 2: ['Completed', 'complete'], 3: ['Declined', 'closed'],
  4: ['Planned', 'planned'], 5: ['Duplicate', 'closed'], 6: null,
}

const id = (value: unknown) => (value === null || value === undefined ? null : String(value))
// Every Fider account was confirmed by an e-mail link or an OAuth sign-in: Fider vouches for it.
const user = (ref: unknown): Person => ({ ref: id(ref), verified: true })

export function fiderSource(options: { board?: string }) {
  const board = { ref: null, name: options.board ?? '' }
  return jsonSource('Fider backup', 'posts', {
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
}
