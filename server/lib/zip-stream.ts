// A zip read as a stream (fflate's streaming Unzip): entries are inflated piece by piece as the bytes
// arrive, never held whole, and everything inflated counts against a limit, so a small zip that would
// inflate hugely (a zip bomb) is refused once it passes the limit instead of filling memory or disk.
// Local file headers are followed in order, data descriptors included (Go's archive/zip writes them).
import { Unzip, UnzipInflate } from 'fflate'
import { FormatError } from './text-stream.ts'

/** A piece of an entry's inflated bytes; `final` marks the entry's last one. */
export interface ZipPiece { entry: string; data: Uint8Array; final: boolean }

/** Input is fed in slices this size, so one push inflates at most ~1,000 times that (deflate's ratio). */
const SLICE = 4096
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]

/** True when `bytes` start like a zip (a local file header). */
export const looksLikeZip = (bytes: Uint8Array) => ZIP_MAGIC.every((byte, index) => bytes[index] === byte)

/**
 * The entries of the zip in `chunks`, piece by piece in file order. Throws FormatError (line 1) when it
 * is not a zip, is truncated or corrupt, uses a method other than stored or deflate, or inflates to more
 * than `maxBytes` in all.
 */
export async function* zipPieces(chunks: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<ZipPiece> {
  const queue: (ZipPiece | FormatError)[] = []
  let inflated = 0
  let entries = 0
  let unfinished: string | null = null
  const unzip = new Unzip((file) => {
    entries++
    if (file.compression !== 0 && file.compression !== 8) return void queue.push(new FormatError(1, `zip entry "${file.name}" uses compression method ${file.compression}; only stored and deflated entries are read`))
    unfinished = file.name
    file.ondata = (error, data, final) => {
      if (error) return void queue.push(new FormatError(1, `zip entry "${file.name}" is corrupt (${error.message})`))
      inflated += data.length
      if (inflated > maxBytes) return void queue.push(new FormatError(1, `the zip inflates to more than ${Math.round(maxBytes / 1024 / 1024)} MB, the import limit`))
      if (final) unfinished = null
      queue.push({ entry: file.name, data, final })
    }
    file.start()
  })
  unzip.register(UnzipInflate)
  const feed = function* (slice: Uint8Array, final = false) {
    try {
      unzip.push(slice, final)
    } catch (error) {
      queue.push(new FormatError(1, final ? 'the zip is truncated: it ends inside an entry' : `the zip is corrupt (${(error as Error).message})`))
    }
    while (queue.length) {
      const next = queue.shift()!
      if (next instanceof FormatError) throw next
      yield next
    }
  }
  let first = true
  for await (const chunk of chunks) {
    if (first && chunk.length) {
      if (!looksLikeZip(chunk)) throw new FormatError(1, 'not a zip file')
      first = false
    }
    for (let at = 0; at < chunk.length; at += SLICE) yield* feed(chunk.subarray(at, at + SLICE))
  }
  if (first) throw new FormatError(1, 'the file is empty')
  yield* feed(new Uint8Array(0), true)
  if (unfinished) throw new FormatError(1, `the zip is truncated: entry "${unfinished}" ends early`)
  if (!entries) throw new FormatError(1, 'the zip holds no entries')
}
