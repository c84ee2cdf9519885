// A streamed multipart/form-data reader for large uploads (imports of up to 100 MB): each file part goes
// to a temporary file as it arrives, so the request is never held in memory (upload.ts reads small image
// uploads whole). Text fields are kept, up to 64 KiB each.
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiError } from '../errors.ts'
import { randomToken } from './secrets.ts'

export interface StreamedPart { path: string; size: number; filename: string | null; type: string }
export interface StreamedForm { fields: Record<string, string>; files: Record<string, StreamedPart> }

const FIELD_LIMIT = 64 * 1024
const HEADER_LIMIT = 16 * 1024
const CRLFCRLF = Buffer.from('\r\n\r\n')

/** The chunks of a body; none for a request without one (a bare `new ReadableStream()` never closes, so reading it would hang). */
const chunksOf = (body: ReadableStream<Uint8Array> | null): AsyncIterable<Uint8Array> =>
  (body ?? new ReadableStream({ start: (controller) => controller.close() })) as unknown as AsyncIterable<Uint8Array>

/** Streams `body` (a whole file, not multipart) into a temporary file under `directory`; 413 past `maxBytes`. */
export async function streamToFile(body: ReadableStream<Uint8Array> | null, directory: string, maxBytes: number): Promise<StreamedPart> {
  await mkdir(directory, { recursive: true })
  const path = join(directory, `upload_${randomToken(12)}`)
  const sink = Bun.file(path).writer()
  let size = 0
  try {
    for await (const chunk of chunksOf(body)) {
      size += chunk.byteLength
      if (size > maxBytes) throw new ApiError('PAYLOAD_TOO_LARGE', `The file is larger than ${maxBytes} bytes`)
      sink.write(chunk)
      await sink.flush()
    }
    await sink.end()
  } catch (error) {
    await Promise.resolve(sink.end()).catch(() => {})
    await rm(path, { force: true })
    throw error
  }
  return { path, size, filename: null, type: '' }
}

/**
 * Reads a multipart body part by part: file parts (those with a filename) into temporary files under
 * `directory`, at most `maxFileBytes` each (413), other parts as text. A malformed body is a 400 and
 * leaves no file behind.
 */
export async function streamMultipart(request: Request, directory: string, maxFileBytes: number): Promise<StreamedForm> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(request.headers.get('content-type') ?? '')
  if (!boundary) throw new ApiError('BAD_REQUEST', 'The multipart body has no boundary')
  const delimiter = Buffer.from(`\r\n--${(boundary[1] ?? boundary[2])!.trim()}`)
  await mkdir(directory, { recursive: true })
  const form: StreamedForm = { fields: {}, files: {} }
  let state: 'preamble' | 'after' | 'headers' | 'body' | 'done' = 'preamble'
  // The body starts with "--boundary": a leading CRLF lets one delimiter find every boundary.
  let buffer = Buffer.from('\r\n')
  let part: { name: string; sink?: ReturnType<ReturnType<typeof Bun.file>['writer']>; file?: StreamedPart; text?: Buffer[]; size: number } | null = null
  const bad = (message: string) => new ApiError('BAD_REQUEST', `The multipart body is malformed: ${message}`)
  const write = async (bytes: Buffer) => {
    if (!part || !bytes.length) return
    part.size += bytes.length
    if (part.sink) {
      if (part.size > maxFileBytes) throw new ApiError('PAYLOAD_TOO_LARGE', `The file "${part.name}" is larger than ${maxFileBytes} bytes`)
      part.sink.write(bytes)
      await part.sink.flush()
    } else {
      if (part.size > FIELD_LIMIT) throw bad(`the field "${part.name}" is longer than ${FIELD_LIMIT} bytes`)
      part.text!.push(bytes)
    }
  }
  const close = async () => {
    if (!part) return
    if (part.sink) {
      await part.sink.end()
      form.files[part.name] = { ...part.file!, size: part.size }
    } else form.fields[part.name] = Buffer.concat(part.text!).toString('utf8')
    part = null
  }
  try {
    for await (const chunk of chunksOf(request.body)) {
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : Buffer.from(chunk)
      for (;;) {
        if (state === 'preamble' || state === 'body') {
          const at = buffer.indexOf(delimiter)
          if (at === -1) {
            const keep = Math.min(buffer.length, delimiter.length - 1)
            if (state === 'body') await write(buffer.subarray(0, buffer.length - keep))
            buffer = Buffer.from(buffer.subarray(buffer.length - keep))
            break
          }
          if (state === 'body') {
            await write(buffer.subarray(0, at))
            await close()
          }
          buffer = buffer.subarray(at + delimiter.length)
          state = 'after'
        } else if (state === 'after') {
          if (buffer.length < 2) break
          const mark = buffer.subarray(0, 2).toString()
          if (mark === '--') { state = 'done'; break }
          if (mark !== '\r\n') throw bad('no line break after a boundary')
          buffer = buffer.subarray(2)
          state = 'headers'
        } else if (state === 'headers') {
          const end = buffer.indexOf(CRLFCRLF)
          if (end === -1) {
            if (buffer.length > HEADER_LIMIT) throw bad('part headers too long')
            break
          }
          const headers = buffer.subarray(0, end).toString('utf8')
          buffer = buffer.subarray(end + 4)
          const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? ''
          const name = /\bname="([^"]*)"/i.exec(disposition)?.[1]
          if (!name) throw bad('a part has no name')
          const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? null
          if (filename !== null) {
            if (form.files[name]) throw bad(`the file "${name}" is sent twice`)
            const path = join(directory, `upload_${randomToken(12)}`)
            part = { name, sink: Bun.file(path).writer(), file: { path, size: 0, filename, type: /^content-type:\s*(.*)$/im.exec(headers)?.[1]?.trim() ?? '' }, size: 0 }
          } else part = { name, text: [], size: 0 }
          state = 'body'
        } else break
      }
      if (state === 'done') break
    }
    if (state !== 'done') throw bad('the body ends before its closing boundary')
  } catch (error) {
    const open = part as { sink?: { end(): unknown }; file?: StreamedPart } | null
    if (open?.sink) await Promise.resolve(open.sink.end()).catch(() => {})
    await discard({ ...form.files, ...(open?.file ? { open: open.file } : {}) })
    throw error
  }
  return form
}

/** Removes the temporary files of a streamed form. */
export async function discard(files: Record<string, StreamedPart>) {
  await Promise.all(Object.values(files).map((file) => rm(file.path, { force: true })))
}
