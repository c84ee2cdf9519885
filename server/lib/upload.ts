import { ApiError } from '../errors.ts'
import { toHex } from './secrets.ts'

/** Room for the multipart boundaries and part headers around the one file. */
export const MULTIPART_OVERHEAD = 64 * 1024

/** Reads the body, refusing with 413 as soon as it passes `maxBytes` (a missing or false Content-Length cannot make us buffer more). */
async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > maxBytes) {
      await reader.cancel().catch(() => {})
      throw new ApiError('PAYLOAD_TOO_LARGE', `The upload is larger than ${maxBytes - MULTIPART_OVERHEAD} bytes`)
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/**
 * A received file that serializes to its name, size and SHA-256, so the Idempotency-Key fingerprint
 * of an upload (a JSON digest of the body) tells one file from another.
 */
export class UploadedFile extends File {
  constructor(bytes: ArrayBuffer, name: string, type: string, readonly sha256: string) {
    super([bytes], name, { type })
  }

  toJSON() {
    return { name: this.name, size: this.size, sha256: this.sha256 }
  }
}

/**
 * An Elysia `parse` hook for upload routes: multipart/form-data only (else 415), at most `maxFileBytes`
 * plus the multipart framing (else 413, before the rest is read), well-formed (else 400). Returns the
 * form fields as an object for the route's body schema.
 */
export function multipartBody(maxFileBytes: number) {
  return async ({ request }: { request: Request }): Promise<Record<string, FormDataEntryValue>> => {
    const contentType = request.headers.get('content-type') ?? ''
    if (!/^multipart\/form-data\s*;/i.test(contentType)) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the file as multipart/form-data with one field named "file"')
    }
    const bytes = await readCapped(request, maxFileBytes + MULTIPART_OVERHEAD)
    let form: FormData
    try {
      form = await new Response(bytes, { headers: { 'content-type': contentType } }).formData()
    } catch {
      throw new ApiError('BAD_REQUEST', 'The multipart body is malformed or truncated')
    }
    const fields: Record<string, FormDataEntryValue> = Object.create(null)
    for (const [name, value] of form) {
      if (Object.hasOwn(fields, name)) throw new ApiError('BAD_REQUEST', `The field "${name}" is sent more than once`)
      if (typeof value === 'string') fields[name] = value
      else {
        const bytes = await value.arrayBuffer()
        fields[name] = new UploadedFile(bytes, value.name, value.type, toHex(await crypto.subtle.digest('SHA-256', bytes)))
      }
    }
    return fields
  }
}
