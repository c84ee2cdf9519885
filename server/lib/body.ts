import { ApiError } from '../errors.ts'

/**
 * The request body as bytes, refused with 413 as soon as it passes `limit` (a chunked body has no
 * Content-Length to check up front), so an oversized body is never buffered whole.
 */
export async function readBodyCapped(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes`)
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}
