// Request generation from an OpenAPI 3.1 document with fast-check, and response checking against
// the same document with ajv: the property-based API fuzzing schemathesis does, in the test suite.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import fc from 'fast-check'

type Schema = Record<string, any>
export type OpenApiDocument = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> }; servers?: { url: string }[] }
export interface Operation {
  operationId: string
  /** Set on operations outside the API's base path (the OAuth protocol endpoints and metadata live at the root). */
  servers?: { url: string }[]
  parameters?: { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema: Schema }[]
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> }
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>
}

export interface FuzzRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: BodyInit
}

/** Values a fuzzer tries against any field: NUL, lone surrogates, bidi overrides, huge and odd numbers, deep and wrong-typed values. */
export const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\u202Eevil\u202C', '', ' ', '%00', '../../etc/passwd', "'; drop table posts; --", '😀', 'x'.repeat(5000), '<script>alert(1)</script>'),
  fc.constantFrom(1e308, -1e308, 2 ** 63, -1, 0, 1.5, Number.MAX_SAFE_INTEGER + 2, -0),
  fc.constantFrom(true, false, null, [], {}),
  fc.integer({ min: 20, max: 60 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth))),
  fc.jsonValue({ maxDepth: 3 }),
)

/** `$ref`s to components inlined, so every schema stands alone (for generation and for ajv). */
export function inline(schema: unknown, document: OpenApiDocument): any {
  if (Array.isArray(schema)) return schema.map((item) => inline(item, document))
  if (!schema || typeof schema !== 'object') return schema
  const object = schema as Schema
  if (typeof object.$ref === 'string') return inline(document.components.schemas[object.$ref.split('/').pop()!], document)
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, inline(value, document)]))
}

const ISO_RANGE = { min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }

/** Values valid for `schema` (a practical subset of JSON Schema: what TypeBox emits). */
export function valid(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || Object.keys(schema).filter((key) => !['description', 'examples', 'title', 'default'].includes(key)).length === 0) return fc.jsonValue({ maxDepth: 2 })
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum)
  const union = schema.anyOf ?? schema.oneOf
  if (Array.isArray(union)) return fc.oneof(...union.map((branch: Schema) => valid({ ...schema, anyOf: undefined, oneOf: undefined, ...branch }, depth)))
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type: string) => (type === 'null' ? fc.constant(null) : valid({ ...schema, type }, depth))))
  switch (schema.type) {
    case 'string':
      return validString(schema)
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100_000 })
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array': {
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)) }
      const items = depth > 4 ? fc.constant(null) : mutated(schema.items, depth + 1)
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (value) => JSON.stringify(value) }) : fc.array(items, constraints)
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      if (depth > 4 || Object.keys(properties).length === 0) return fc.constant({})
      const record = fc.record(Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, mutated(property, depth + 1)])), { requiredKeys: (schema.required ?? []).filter((name: string) => name in properties) })
      return record as fc.Arbitrary<unknown>
    }
  }
  return fc.jsonValue({ maxDepth: 2 })
}

function validString(schema: Schema): fc.Arbitrary<string> {
  const maxLength = Math.min(schema.maxLength ?? 40, 80)
  const minLength = Math.min(schema.minLength ?? 0, maxLength)
  const fits = (value: string) => value.length >= minLength && value.length <= (schema.maxLength ?? Infinity)
  switch (schema.format) {
    case 'email':
      return fc.emailAddress().filter(fits)
    case 'date-time':
      return fc.date(ISO_RANGE).map((date) => date.toISOString())
    case 'date':
      return fc.date(ISO_RANGE).map((date) => date.toISOString().slice(0, 10))
    case 'uri':
      return fc.webUrl().filter(fits)
  }
  if (typeof schema.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(schema.pattern)).filter(fits)
    } catch {
      // fast-check cannot generate from every regex (lookaheads): the documented examples, or any string (a 422 is fine).
      const examples = (Array.isArray(schema.examples) ? schema.examples : []).filter((example: unknown) => typeof example === 'string')
      return examples.length ? fc.oneof(fc.constantFrom(...(examples as string[])), fc.string({ maxLength })) : fc.string({ maxLength })
    }
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme' })
}

/** Mostly valid values, sometimes a nasty one in its place. */
export const mutated = (schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 5, arbitrary: valid(schema, depth) }, { weight: 1, arbitrary: nasty })

/** Bodies no JSON route should accept: deep nesting, invalid UTF-8, other media types. */
const rawBodies = fc.constantFrom<[string, BodyInit]>(
  ['application/json', '['.repeat(50_000) + ']'.repeat(50_000)],
  ['application/json', new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ['application/json', '{"a":'],
  ['application/json', `[${'0,'.repeat(20_000)}0]`],
  ['application/x-www-form-urlencoded', 'title=form&name=x'],
  ['text/plain', '{"title":"text"}'],
  ['application/xml', '<a/>'],
)

/** Percent-encodes a value for a URL; a lone surrogate (not encodable as UTF-8) becomes its invalid 3-byte form. */
export function encode(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? ''
  try {
    return encodeURIComponent(text)
  } catch {
    return `${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))}%ED%A0%80`
  }
}

export interface RequestContext {
  /** Real values for path parameters by name (fixture ids), so requests get past the 404s. */
  known: Record<string, string[]>
  /** Path parameter names for which real values must not be used on this operation (destructive ones). */
  avoidKnown: boolean
  headers: Record<string, string>
  /** An `Authorization` header to send (the credential-less mode fuzzes it), or none. */
  authorization?: fc.Arbitrary<string | undefined>
}

/** `Authorization` values a client without credentials might send: Basic with malformed base64 or percent-encoding, other schemes, junk. */
export const strayAuthorization: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('%E0%A4%A', '%', '%ZZ', 'a%', '%ED%A0%80', 'oac_x', '', ':'), fc.constantFrom('%', 's%E0%A4%A', 'secret', '', '%00'))
    .map(([id, secret]) => `Basic ${btoa(`${id}:${secret}`)}`) },
  { weight: 1, arbitrary: fc.constantFrom('Basic', 'Basic !!!', 'Basic ' + btoa('no-colon'), 'Bearer', 'Bearer chorus_at_x', 'Bearer chorus_sk_x', 'Digest x', 'x'.repeat(3000)) },
)

const formValue = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value) ?? '')

/** An arbitrary request for one operation of the document. */
export function requestFor(path: string, method: string, operation: Operation, document: OpenApiDocument, context: RequestContext): fc.Arbitrary<FuzzRequest> {
  const parameters = operation.parameters ?? []
  const pathParams = parameters.filter((p) => p.in === 'path')
  const queryParams = parameters.filter((p) => p.in === 'query')
  const headerParams = parameters.filter((p) => p.in === 'header')
  const pathValue = (name: string, schema: Schema) => {
    const known = context.avoidKnown ? [] : context.known[name] ?? []
    const fuzzed = fc.oneof({ weight: 3, arbitrary: valid(inline(schema, document)) }, { weight: 1, arbitrary: nasty })
    // An empty, "." or ".." segment would address another route (or none), not this operation.
    const segment = fuzzed.filter((value) => !['', '.', '..'].includes(encode(value)))
    return known.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 2, arbitrary: segment }) : segment
  }
  const bodySchema = operation.requestBody?.content['application/json']?.schema
  const formSchema = !bodySchema && operation.requestBody?.content['application/x-www-form-urlencoded']?.schema
  const textBody = !bodySchema && operation.requestBody?.content['text/plain']
  const body: fc.Arbitrary<[string, BodyInit] | undefined> = bodySchema
    ? fc.oneof(
        { weight: 8, arbitrary: mutated(inline(bodySchema, document)).map((value): [string, BodyInit] => ['application/json', JSON.stringify(value) ?? 'null']) },
        { weight: 1, arbitrary: rawBodies },
      )
    : formSchema
      ? fc.oneof(
          // Each field mostly valid, sometimes nasty, stringified as a form field; malformed percent-encoding as is.
          { weight: 8, arbitrary: mutated(inline(formSchema, document)).map((value): [string, BodyInit] => ['application/x-www-form-urlencoded', value && typeof value === 'object' && !Array.isArray(value)
            ? new URLSearchParams(Object.entries(value).map(([name, field]) => [name, formValue(field)])).toString() : formValue(value)]) },
          { weight: 1, arbitrary: fc.constantFrom<[string, BodyInit]>(['application/x-www-form-urlencoded', 'grant_type=%E0%A4%A&client_id=%'], ['application/x-www-form-urlencoded', 'a=1&a=2&grant_type=refresh_token&grant_type=x']) },
          { weight: 1, arbitrary: rawBodies },
        )
    : textBody
      ? fc.string().map((text): [string, BodyInit] => ['text/plain', text])
      : fc.constant(undefined)
  return fc
    .record({
      path: fc.tuple(...pathParams.map((p) => pathValue(p.name, p.schema))),
      query: fc.tuple(...queryParams.map((p) => fc.option(mutated(inline(p.schema, document)), { nil: undefined, freq: 2 }))),
      header: fc.tuple(...headerParams.map((p) => fc.option(fc.oneof(fc.constantFrom(...(context.known[p.name.replaceAll('-', '_')] ?? ['x'])), fc.stringMatching(/^[a-z0-9-]{0,20}$/)), { nil: undefined, freq: 4 }))),
      body,
      authorization: context.authorization ?? fc.constant(undefined),
    })
    .map(({ path: pathValues, query, header, body: chosen, authorization }) => {
      const base = (operation.servers?.[0]?.url ?? document.servers?.[0]?.url ?? '/api/v1').replace(/\/$/, '')
      let url = `${base}${path}`
      pathParams.forEach((p, i) => (url = url.replace(`{${p.name}}`, encode(pathValues[i]))))
      const search = queryParams.flatMap((p, i) => (query[i] === undefined ? [] : Array.isArray(query[i]) && (query[i] as unknown[]).length ? (query[i] as unknown[]).map((item) => `${p.name}=${encode(item)}`) : [`${p.name}=${encode(query[i])}`]))
      if (search.length) url += `?${search.join('&')}`
      const headers: Record<string, string> = { ...context.headers }
      headerParams.forEach((p, i) => header[i] !== undefined && (headers[p.name] = header[i]!))
      if (chosen) headers['content-type'] = chosen[0]
      if (authorization !== undefined) headers.authorization = authorization
      return { method: method.toUpperCase(), path: url, headers, body: chosen?.[1] }
    })
}

/** The media types documented for a response status (e.g. `text/html` for a page, `application/atom+xml` for a feed). */
export function documentedMediaTypes(document: OpenApiDocument, path: string, method: string, status: number): string[] {
  const responses = document.paths[path]![method]!.responses
  return Object.keys(responses[String(status)]?.content ?? {})
}

/** Validators for every documented response of every operation, compiled once. */
export function responseValidators(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true })
  addFormats(ajv)
  const cache = new Map<string, ValidateFunction | null>()
  return (path: string, method: string, status: number): ValidateFunction | null | undefined => {
    const responses = document.paths[path]![method]!.responses
    const key = responses[String(status)] ? String(status) : responses[`${String(status)[0]}XX`] ? `${String(status)[0]}XX` : responses.default ? 'default' : undefined
    if (!key) return undefined
    const id = `${method} ${path} ${key}`
    if (!cache.has(id)) {
      const schema = responses[key]!.content?.['application/json']?.schema
      cache.set(id, schema ? ajv.compile(stripNullable(inline(schema, document)) as object) : null)
    }
    return cache.get(id)!
  }
}

/** `nullable` is OpenAPI 3.0; the document also states `type: [..., "null"]`, which is what 3.1 means. */
function stripNullable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripNullable)
  if (!schema || typeof schema !== 'object') return schema
  return Object.fromEntries(Object.entries(schema).filter(([key]) => key !== 'nullable').map(([key, value]) => [key, stripNullable(value)]))
}
