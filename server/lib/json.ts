import { ApiError, invalid } from '../errors.ts'
import { textProblem } from './text.ts'

/**
 * Limits every JSON request body is held to before JSON.parse sees it. JSON.parse recurses once per
 * nesting level, so an unbounded depth costs seconds and can overflow the stack; the scan below
 * checks these limits in one pass with constant stack (a fixed-size counter per open level).
 */
export const JSON_LIMITS = {
  /** Objects and arrays nested deeper than this are refused (our richest body nests 4 levels). */
  maxDepth: 32,
  /** Members of one object or elements of one array. */
  maxItems: 10_000,
  /** UTF-16 code units of one string (key or value), escapes counted as written. */
  maxString: 256 * 1024,
} as const

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

const tooLarge = (msg: string) => invalid(['body'], msg, 'value_error.json_limit')

/** Refuses nesting, container and string sizes past JSON_LIMITS without building anything. */
function scan(text: string) {
  const items = new Int32Array(JSON_LIMITS.maxDepth + 1)
  let depth = 0
  let inString = false
  let stringStart = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) {
        inString = false
        if (i - stringStart > JSON_LIMITS.maxString) throw tooLarge(`A string in the body is longer than ${JSON_LIMITS.maxString} characters`)
      }
      continue
    }
    if (c === 0x22) {
      inString = true
      stringStart = i
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > JSON_LIMITS.maxDepth) throw tooLarge(`The body nests objects and arrays deeper than ${JSON_LIMITS.maxDepth} levels`)
      items[depth] = 0
    } else if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--
    } else if (c === 0x2c && depth > 0) {
      // n separators mean n + 1 members.
      if (++items[depth]! >= JSON_LIMITS.maxItems) throw tooLarge(`An object or array in the body has more than ${JSON_LIMITS.maxItems} members`)
    }
  }
}

/** The first string (key or value) of a parsed body that cannot be stored as text, with its location. */
export function findTextProblem(value: unknown, loc: (string | number)[]): { loc: (string | number)[]; msg: string } | undefined {
  // Recursion is bounded: bodies reach here only after scan() limited their depth.
  if (typeof value === 'string') {
    const msg = textProblem(value)
    return msg ? { loc, msg } : undefined
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findTextProblem(value[i], [...loc, i])
      if (found) return found
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      const keyMsg = textProblem(key)
      if (keyMsg) return { loc: [...loc, key], msg: keyMsg }
      const found = findTextProblem(member, [...loc, key])
      if (found) return found
    }
  }
  return undefined
}

/**
 * A JSON request body: strict UTF-8 (invalid bytes are 422, never silently U+FFFD), JSON_LIMITS,
 * then JSON.parse, then no NUL or lone surrogate in any string. Malformed JSON is 400.
 */
export function parseJsonBody(bytes: ArrayBuffer | Uint8Array): unknown {
  let text: string
  try {
    text = fatalUtf8.decode(bytes)
  } catch {
    throw invalid(['body'], 'The body is not valid UTF-8', 'value_error.utf8')
  }
  scan(text)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ApiError('BAD_REQUEST', 'The request body could not be parsed as JSON')
  }
  const problem = findTextProblem(value, ['body'])
  if (problem) throw invalid(problem.loc, problem.msg, 'value_error.text')
  return value
}

/**
 * A JSON body that is already text (PostgreSQL wrote it): sent as it is, with the type Elysia gives an
 * object. The route's response schema still documents it; Elysia does not validate a Response.
 */
export const jsonText = (body: string, status = 200) => new Response(body, { status, headers: { 'content-type': 'application/json' } })
