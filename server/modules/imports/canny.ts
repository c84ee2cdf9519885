// Canny's API objects (developers.canny.io/api-reference), as its list endpoints return them, in one
// JSON object: `{"boards": [...], "companies": [...], "users": [...], "statuses": [...], "posts": [...],
// "comments": [...], "votes": [...], "entries": [...]}` (`changelog_entries` is accepted for `entries`).
// Mapping: docs/import.md#canny.
import { jsonSource, type Item } from './json-source.ts'
import { isoDate, KIND_BY_STATUS_NAME, rowError, text, type Person, type StatusKindName } from './records.ts'

/** Canny's status types → our kinds. */
const KIND_BY_TYPE: Record<string, StatusKindName> = { initial: 'open', active: 'in_progress', complete: 'complete', closed: 'closed' }

/** A Canny user object: its `userID` is the id the customer's own app identified it with, so Canny vouches for it. */
function person(user: Item | null | undefined): Person | null {
  if (!user || typeof user !== 'object' || !text(user.id)) return null
  return {
    ref: String(user.id), externalId: text(user.userID), email: text(user.email)?.toLowerCase() ?? null, name: text(user.name),
    verified: !!text(user.userID), createdAt: isoDate(user.created),
    companyRefs: Array.isArray(user.companies) ? user.companies.map((company: Item) => text(company?.id)).filter((ref: string | null): ref is string => !!ref) : [],
  }
}

const refOf = (value: unknown) => (value && typeof value === 'object' ? text((value as Item).id) : text(value))

const changelog = (item: Item, line: number) => {
  if (!text(item.id) || !text(item.title)) return rowError(line, 'a changelog entry needs an id and a title')
  const publishedAt = item.status === 'published' ? isoDate(item.publishedAt) ?? isoDate(item.created) : null
  return {
    kind: 'changelog' as const, line, ref: String(item.id), title: String(item.title), body: text(item.markdownDetails) ?? text(item.plaintextDetails) ?? '',
    publishedAt, createdAt: isoDate(item.created) ?? new Date(0).toISOString(),
    postRefs: Array.isArray(item.posts) ? item.posts.map(refOf).filter((ref: string | null): ref is string => !!ref) : [],
  }
}

export function cannySource() {
  return jsonSource('Canny export', 'posts', {
    company: {
      companies: (item: Item, line) => (text(item.id)
        ? { kind: 'company', line, ref: String(item.id), name: text(item.name) ?? String(item.id), mrr: Math.max(0, Math.round(Number(item.monthlySpend ?? 0) * 100)) || 0, createdAt: isoDate(item.created) }
        : rowError(line, 'a company needs an id')),
    },
    user: {
      users: (item: Item, line) => {
        const who = person(item)
        return who ? { kind: 'user', line, person: who } : rowError(line, 'a user needs an id')
      },
    },
    board: {
      boards: (item: Item, line) => (text(item.id) && text(item.name)
        ? { kind: 'board', line, board: { ref: String(item.id), name: String(item.name), isPrivate: item.isPrivate === true, createdAt: isoDate(item.created) } }
        : rowError(line, 'a board needs an id and a name')),
    },
    status: {
      statuses: (item: Item, line) => {
        const name = text(item.name)
        const kind = KIND_BY_TYPE[String(item.type)] ?? KIND_BY_STATUS_NAME[name?.toLowerCase() ?? ''] ?? (item.kind as StatusKindName | undefined)
        return name && kind ? { kind: 'status', line, name, statusKind: kind } : rowError(line, 'a status needs a name and a type (initial, active, complete or closed)')
      },
    },
    post: {
      posts: (item: Item, line) => {
        const board = item.board && typeof item.board === 'object' ? item.board as Item : null
        if (!text(item.id) || !text(item.title) || !text(board?.id)) return rowError(line, 'a post needs an id, a title and a board')
        const createdAt = isoDate(item.created)
        if (!createdAt) return rowError(line, `created "${item.created}" is not a date`)
        return {
          kind: 'post', line, ref: String(item.id), board: { ref: String(board!.id), name: text(board!.name) ?? String(board!.id) },
          title: String(item.title).slice(0, 300), body: text(item.details) ?? '', status: text(item.status), author: person(item.author), createdAt,
          voteCount: Math.max(0, Number.isInteger(item.score) ? item.score : 0),
          labels: Array.isArray(item.tags) ? item.tags.map((tag: Item) => text(tag?.name)).filter((name: string | null): name is string => !!name) : [],
        }
      },
    },
    comment: {
      comments: (item: Item, line) => {
        const postRef = refOf(item.post)
        if (!text(item.id) || !postRef || !text(item.value)) return rowError(line, 'a comment needs an id, a post and a value')
        return {
          kind: 'comment', line, ref: String(item.id), postRef, parentRef: text(item.parentID), author: person(item.author), body: String(item.value),
          internal: item.internal === true || item.private === true, createdAt: isoDate(item.created) ?? new Date(0).toISOString(),
        }
      },
    },
    vote: {
      votes: (item: Item, line) => {
        const postRef = refOf(item.post)
        const voter = person(item.voter)
        if (!postRef || !voter) return rowError(line, 'a vote needs a post and a voter')
        return { kind: 'vote', line, postRef, voter, createdAt: isoDate(item.created) ?? new Date(0).toISOString() }
      },
    },
    changelog: { entries: changelog, changelog_entries: changelog },
  })
}
