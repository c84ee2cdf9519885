import { t } from 'elysia'
import type { FilePurpose } from '../../db/schema/index.ts'
import type { ImageType } from '../../lib/image-type.ts'

const MiB = 1024 * 1024

export { fileUrl } from './url.ts'

/** What each upload slot accepts: the type is decided by the file's first bytes, the size by its length. */
export const UPLOAD_RULES: Record<FilePurpose, { maxBytes: number; types: readonly ImageType[]; label: string }> = {
  avatar: { maxBytes: 2 * MiB, types: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'], label: 'PNG, JPEG, WebP or GIF' },
  logo: { maxBytes: 2 * MiB, types: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'], label: 'PNG, JPEG, WebP or GIF' },
  favicon: { maxBytes: 512 * 1024, types: ['image/png', 'image/x-icon'], label: 'PNG or ICO' },
}

export const ImageUpload = t.Object({
  file: t.File({ description: 'The image. Its type is read from its first bytes; the file name and the part\'s Content-Type are ignored.' }),
}, { additionalProperties: false, $id: 'ImageUpload', description: 'multipart/form-data with exactly one field, `file`' })

export const FileParams = t.Object({ file_id: t.String({ maxLength: 64 }) })

/** How an upload route's OpenAPI description states its limits. */
export function uploadDescription(purpose: FilePurpose, extra: string) {
  const rule = UPLOAD_RULES[purpose]
  return `${extra} Multipart with one field \`file\`: ${rule.label}, at most ${rule.maxBytes / 1024} KiB. `
    + 'The type is decided by the file\'s magic bytes (SVG and everything else: 415 UNSUPPORTED_MEDIA_TYPE); a larger file is 413 PAYLOAD_TOO_LARGE '
    + 'and a malformed or truncated multipart body 400 BAD_REQUEST, with nothing stored. The file is stored under a random name and the one it replaces is deleted. '
    + 'It is served from `/files/{id}` with its detected type, `X-Content-Type-Options: nosniff`, `Content-Security-Policy: default-src \'none\'; sandbox`, '
    + '`Cross-Origin-Resource-Policy: cross-origin` and `Cache-Control: public, max-age=31536000, immutable` (a new upload gets a new URL).'
}
