import { t } from 'elysia'
import type { TLiteral } from '@sinclair/typebox'

/**
 * A string enum as a union of literals. Elysia's own t.UnionEnum carries `default: values[0]`, which
 * Elysia applies to missing fields, so a required enum that was left out would silently get a value.
 */
export function Enum<const T extends string>(values: readonly [T, ...T[]], options: { description?: string } = {}) {
  return t.Union(values.map((value) => t.Literal(value)) as [TLiteral<T>, ...TLiteral<T>[]], options)
}
