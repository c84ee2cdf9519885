import { t } from 'elysia'
import { Type, type IntegerOptions, type TLiteral } from '@sinclair/typebox'

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
