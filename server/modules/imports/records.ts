// The one shape every import format is read into (docs/import.md): a source yields these records, pass
// by pass in dependency order, and the writer (writer.ts) turns them into rows. `ref` is the source's own
// id: external_refs keeps which local row it became, so a second run of the same file creates nothing.

/** The largest import file (each part), and the most a zip may inflate to. */
export const IMPORT_MAX_BYTES = 100 * 1024 * 1024

/** Someone who wrote or voted: found by source id, then by the customer's id, then by e-mail. */
export interface Person {
  ref?: string | null
  externalId?: string | null
  email?: string | null
  name?: string | null
  /** The source vouches for this identity (it was signed in or identified there); else an unverified end user. */
  verified?: boolean
  createdAt?: string | null
  /** Source ids of the companies they belong to. */
  companyRefs?: string[]
}

export interface BoardSpec { ref?: string | null; name: string; isPrivate?: boolean; createdAt?: string | null }

export type ImportRecord = { line: number } & (
  | { kind: 'company'; ref: string; name: string; mrr: number; createdAt?: string | null }
  | { kind: 'user'; person: Person }
  | { kind: 'board'; board: BoardSpec }
  | { kind: 'status'; name: string; statusKind: StatusKindName }
  | { kind: 'label'; ref: string; name: string; color?: string | null }
  | {
      kind: 'post'; ref: string; board: BoardSpec; title: string; body: string; status: string | null; statusKind?: StatusKindName | null
      author: Person | null; createdAt: string; voteCount: number; labels: string[]
    }
  | { kind: 'post_label'; postRef: string; labelRef: string }
  | { kind: 'comment'; ref: string; postRef: string; parentRef?: string | null; author: Person | null; body: string; internal: boolean; createdAt: string }
  | { kind: 'vote'; postRef: string; voter: Person; createdAt: string }
  | { kind: 'changelog'; ref: string; title: string; body: string; publishedAt: string | null; createdAt: string; postRefs: string[] }
  | { kind: 'error'; message: string }
)

export type RecordKind = Exclude<ImportRecord['kind'], 'error'>
export type StatusKindName = 'open' | 'planned' | 'in_progress' | 'complete' | 'closed'

/** A source's status name → the kind it means, when no local status has that name. */
export const KIND_BY_STATUS_NAME: Record<string, StatusKindName> = {
  open: 'open', 'under review': 'open', new: 'open', 'needs review': 'open',
  planned: 'planned', 'in progress': 'in_progress', started: 'in_progress', 'in_progress': 'in_progress',
  complete: 'complete', completed: 'complete', done: 'complete', shipped: 'complete',
  closed: 'closed', declined: 'closed', rejected: 'closed', duplicate: 'closed',
}

/** One of a file's records, or a row-level problem with it. */
export const rowError = (line: number, message: string): ImportRecord => ({ kind: 'error', line, message })

/** An ISO timestamp from a source's date, or null when it is missing or not a date. */
export function isoDate(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null
  const date = new Date(value as string)
  return Number.isNaN(date.getTime()) ? null : date.toISOString()
}

export const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : typeof value === 'number' ? String(value) : null)

/** A file of a format, opened once per pass: parts are `file` and, for CSV, `votes` and `comments`. */
export type OpenPart = (part: string) => Promise<ReadableStream<Uint8Array> | null>

export interface Source {
  /** The passes in order: each reads the file again and yields only its kind's records. */
  passes: RecordKind[]
  read(pass: RecordKind, open: OpenPart): AsyncGenerator<ImportRecord & { file: string }>
  /** Reads every part once and throws FormatError (→ 422) when one is not what the format says; returns the records per part. */
  check(open: OpenPart): Promise<Record<string, number>>
}
