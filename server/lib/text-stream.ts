// Streamed readers of the import formats (docs/import.md): files of up to 100 MB are read chunk by
// chunk and handed on one record at a time, never held whole. A file that is not what it claims throws
// FormatError naming its line; the caller turns that into a 422.

export class FormatError extends Error {
  constructor(readonly line: number, message: string) {
    super(`line ${line}: ${message}`)
  }
}

/** A byte stream as text chunks (UTF-8, a leading BOM dropped). */
export async function* textChunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false })
  for await (const bytes of stream as unknown as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(bytes, { stream: true })
    if (text) yield text
  }
  const rest = decoder.decode()
  if (rest) yield rest
}

export interface CsvRecord { line: number; fields: string[] }

const QUOTE = 34, COMMA = 44, LF = 10, CR = 13

/**
 * RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks; CRLF or LF ends a
 * record; blank lines are skipped. `line` is where the record starts. A quote left open at the end, or
 * text after a closing quote, is a FormatError.
 */
export async function* csvRecords(chunks: AsyncIterable<string>): AsyncGenerator<CsvRecord> {
  let fields: string[] = []
  let field = ''
  let quoted = false // inside a quoted field
  let closed = false // just after a quoted field's closing quote
  let pendingQuote = false // a quote inside a quoted field: the end, or the first of a doubled pair
  let line = 1
  let recordLine = 1
  let empty = true // nothing yet in this record
  for await (const chunk of chunks) {
    let i = 0
    while (i < chunk.length) {
      const c = chunk.charCodeAt(i)
      if (pendingQuote) {
        pendingQuote = false
        if (c === QUOTE) { field += '"'; i++; continue }
        quoted = false
        closed = true
      }
      if (quoted) {
        // Copy up to the next quote in one slice.
        const next = chunk.indexOf('"', i)
        const end = next === -1 ? chunk.length : next
        const text = chunk.slice(i, end)
        for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) line++
        field += text
        i = end
        if (next !== -1) { pendingQuote = true; i++ }
        continue
      }
      if (c === COMMA) {
        fields.push(field); field = ''; closed = false; empty = false; i++
      } else if (c === LF || c === CR) {
        if (!empty || field !== '' || closed) {
          fields.push(field)
          yield { line: recordLine, fields }
        }
        fields = []; field = ''; closed = false; empty = true
        if (c === LF) line++
        i++
        recordLine = line
      } else if (closed) {
        throw new FormatError(line, 'text after a closing quote (a quote inside a field must be doubled)')
      } else if (c === QUOTE && field === '') {
        quoted = true; empty = false; i++
      } else {
        // Copy the plain run up to the next delimiter in one slice.
        let end = i + 1
        while (end < chunk.length) {
          const d = chunk.charCodeAt(end)
          if (d === COMMA || d === LF || d === CR) break
          end++
        }
        field += chunk.slice(i, end); empty = false; i = end
      }
    }
  }
  if (pendingQuote) { quoted = false; closed = true }
  if (quoted) throw new FormatError(recordLine, 'a quoted field is never closed')
  if (!empty || field !== '' || closed) {
    fields.push(field)
    yield { line: recordLine, fields }
  }
}

export interface JsonItem { section: string; line: number; value: unknown }

const OPEN_OBJECT = 123, CLOSE_OBJECT = 125, OPEN_ARRAY = 91, CLOSE_ARRAY = 93, BACKSLASH = 92, COLON = 58

const isSpace = (c: number) => c === 32 || c === 9 || c === LF || c === CR

/**
 * The members of a top-level JSON object, streamed: `{"posts": [{...}, {...}], "tenant": {...}}` yields
 * each element of an array member as `{section: "posts", line, value}`, and a member that is not an
 * array once, as its own value. Only one element is held at a time. Anything but an object of members
 * is a FormatError naming the line.
 */
export async function* jsonSections(chunks: AsyncIterable<string>): AsyncGenerator<JsonItem> {
  let line = 1
  let depth = 0
  let inString = false
  let escape = false
  // Where we are in the top-level object: expecting a key, its colon, its value, or a comma / the end.
  let expect: 'open' | 'key' | 'colon' | 'value' | 'next' | 'end' = 'open'
  let key = ''
  let keyParts: string[] | null = null
  let keyFrom = 0
  let inSection = false // inside an array member: its elements are captured one by one
  let elementExpected = false
  // The value being captured: its text so far, where it started, the depth it lives at.
  let capture: { parts: string[]; line: number; depth: number; scalar: boolean } | null = null
  let captureFrom = 0
  const finish = (text: string): JsonItem => {
    const at = capture!.line
    capture = null
    try {
      return { section: key, line: at, value: JSON.parse(text) }
    } catch {
      throw new FormatError(at, `"${key}" holds a value that is not valid JSON`)
    }
  }
  for await (const chunk of chunks) {
    captureFrom = 0
    keyFrom = 0
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i)
      if (c === LF) line++
      if (inString) {
        if (escape) escape = false
        else if (c === BACKSLASH) escape = true
        else if (c === QUOTE) {
          inString = false
          if (keyParts) {
            const raw = keyParts.join('') + chunk.slice(keyFrom, i)
            keyParts = null
            try { key = JSON.parse(`"${raw}"`) } catch { throw new FormatError(line, 'a key is not a valid JSON string') }
            expect = 'colon'
          } else if (capture?.scalar && depth === capture.depth) {
            yield finish(capture.parts.join('') + chunk.slice(captureFrom, i + 1))
          }
        }
        continue
      }
      if (capture?.scalar && depth === capture.depth && (c === COMMA || c === CLOSE_ARRAY || c === CLOSE_OBJECT || isSpace(c))) {
        yield finish(capture.parts.join('') + chunk.slice(captureFrom, i))
      }
      if (capture) {
        if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++
        else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
          depth--
          if (depth === capture.depth) yield finish(capture.parts.join('') + chunk.slice(captureFrom, i + 1))
        } else if (c === QUOTE) inString = true
        continue
      }
      if (isSpace(c) || c === 0xfeff) continue
      // Outside any captured value: the top-level object's own punctuation, or an array member's.
      if (inSection) {
        if (c === CLOSE_ARRAY) { inSection = false; depth--; expect = 'next'; continue }
        if (c === COMMA && !elementExpected) { elementExpected = true; continue }
        if (!elementExpected) throw new FormatError(line, `expected "," or "]" in "${key}"`)
        elementExpected = false
        capture = { parts: [], line, depth: 2, scalar: c !== OPEN_OBJECT && c !== OPEN_ARRAY }
        captureFrom = i
        if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++
        else if (c === QUOTE) inString = true
        continue
      }
      switch (expect) {
        case 'open':
          if (c !== OPEN_OBJECT) throw new FormatError(line, 'expected a JSON object ({) at the start of the file')
          depth = 1; expect = 'key'; break
        case 'key':
          if (c === CLOSE_OBJECT && key === '') { depth = 0; expect = 'end'; break }
          if (c !== QUOTE) throw new FormatError(line, 'expected a member name in the top-level object')
          inString = true; keyParts = []; keyFrom = i + 1; break
        case 'colon':
          if (c !== COLON) throw new FormatError(line, `expected ":" after "${key}"`)
          expect = 'value'; break
        case 'value':
          if (c === OPEN_ARRAY) { inSection = true; elementExpected = true; depth = 2; break }
          capture = { parts: [], line, depth: 1, scalar: c !== OPEN_OBJECT }
          captureFrom = i
          if (c === OPEN_OBJECT) depth++
          else if (c === QUOTE) inString = true
          expect = 'next'
          break
        case 'next':
          if (c === COMMA) expect = 'key'
          else if (c === CLOSE_OBJECT) { depth = 0; expect = 'end' }
          else throw new FormatError(line, 'expected "," or "}" between top-level members')
          break
        case 'end':
          throw new FormatError(line, 'text after the end of the JSON object')
      }
    }
    if (capture) { capture.parts.push(chunk.slice(captureFrom)); captureFrom = 0 }
    if (keyParts) { keyParts.push(chunk.slice(keyFrom)); keyFrom = 0 }
  }
  if (capture?.scalar && depth === capture.depth) yield finish(capture.parts.join(''))
  if (expect !== 'end' || inString || capture) throw new FormatError(line, 'the file ends before its JSON object is closed')
}
