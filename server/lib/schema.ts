import { t } from 'elysia'
import { FormatRegistry, Type, type IntegerOptions, type TLiteral } from '@sinclair/typebox'

/** The address rule request bodies have always been checked against (zod's `email`, as the OpenAPI plugin registered it). */
const EMAIL = /^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/
/** A calendar date, YYYY-MM-DD, leap years included (zod's `date`). */
const DATE = /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8])))$/

/** The form every timestamp the API writes has (`toISOString`), with each field in its range. */
const CANONICAL_DATE_TIME = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/
let looseDateTime: ((value: string) => boolean) | undefined
/**
 * Elysia's `date-time` check (a replace, unanchored patterns and a Date parse: ~0.3 µs, 40 times for a
 * page of posts when the response is validated) answers the canonical form at once. Everything it
 * matches, Elysia's check accepts too, so what is accepted does not change.
 */
const dateTime = (value: string) => CANONICAL_DATE_TIME.test(value) || (looseDateTime?.(value) ?? false)

/**
 * Sets the string formats our schemas use (`email`, `date`) to precompiled patterns. Importing
 * `@elysiajs/openapi` replaces TypeBox's format checks with ones that build a zod schema on every call:
 * about 5 % of the CPU of a vote toggle went to building `z.string().email()` once per request. Called by
 * createApp, after every module has been imported, so the last registration is this one.
 */
export function registerStringFormats() {
  FormatRegistry.Set('email', (value) => EMAIL.test(value))
  FormatRegistry.Set('date', (value) => DATE.test(value))
  const current = FormatRegistry.Get('date-time')
  if (current !== dateTime) {
    looseDateTime = current
    FormatRegistry.Set('date-time', dateTime)
  }
}

/**
 * A string enum as a union of literals. Elysia's own t.UnionEnum carries `default: values[0]`, which
 * Elysia applies to missing fields, so a required enum that was left out would silently get a value.
 */
export function Enum<const T extends string>(values: readonly [T, ...T[]], options: { description?: string } = {}) {
  return t.Union(values.map((value) => t.Literal(value)) as [TLiteral<T>, ...TLiteral<T>[]], options)
}

/**
 * A JSON integer. Elysia's own t.Integer also accepts integer strings ("2") and documents itself as
 * `string | integer` with `default: 0`, which would leak into the OpenAPI document and the SDK types.
 */
export const Integer = (options: IntegerOptions = {}) => Type.Integer(options)

export const HexColor = t.String({ pattern: '^#[0-9a-fA-F]{6}$', examples: ['#8b5cf6'] })

/** Every time in the API: ISO 8601 UTC with milliseconds. */
export const Timestamp = t.String({ format: 'date-time', examples: ['2026-11-22T09:30:00.000Z'] })

/** A prefixed id or a slug in a path; the bound keeps junk out of the lookups. */
export const PathId = t.String({ maxLength: 64 })

/** A workspace or board slug as chosen at creation. */
export const Slug = t.String({ pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$', minLength: 2, maxLength: 48, examples: ['acme'] })

export const WorkspaceSlugParams = t.Object({ workspace_slug: t.String({ maxLength: 64, description: 'The workspace slug', examples: ['acme'] }) })
/** Routes without a slug in the path: keys use their own workspace, dashboard sessions name one here. */
export const WorkspaceHeader = t.Object({
  'x-workspace': t.Optional(t.String({ maxLength: 64, description: 'Dashboard sessions only: the slug of the workspace to act in (API keys always act in their own)' })),
})
export const PublicWorkspaceParams = WorkspaceSlugParams
export const PublicBoardParams = t.Object({ workspace_slug: PathId, board_slug: PathId })
export const PublicPostParams = t.Object({ workspace_slug: PathId, post_id: PathId })
