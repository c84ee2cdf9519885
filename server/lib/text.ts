// Rules for text stored from requests.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a string cannot be stored as text (PostgreSQL refuses NUL; lone surrogates are not Unicode), or undefined when it can. */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'NUL characters are not allowed in text'
  if (LONE_SURROGATE.test(value)) return 'Text must be valid Unicode: lone surrogate code units are not allowed'
  return undefined
}

/**
 * The bidirectional embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069). In a
 * one-line title shown to other people they only serve to disguise text ("Trojan Source"), so
 * titles are stored without them.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g

export const stripBidiControls = (value: string) => value.replace(BIDI_CONTROLS, '')

export const TITLE_TEXT_RULE = 'Bidirectional override, embedding and isolate characters (U+202A–U+202E, U+2066–U+2069) are removed before the title is stored; surrounding whitespace is trimmed.'

/** One `application/x-www-form-urlencoded` value decoded (`+` is a space); undefined when its percent-encoding is malformed. */
export function formDecode(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}
