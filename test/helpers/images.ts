// Tiny but valid images, built byte by byte so the upload tests use real formats without fixture files.
import { deflateSync } from 'node:zlib'

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

function crc32(bytes: Uint8Array) {
  let c = 0xffffffff
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const concat = (...parts: (Uint8Array | number[])[]): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

const ascii = (text: string) => new TextEncoder().encode(text)
const u32be = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]

function pngChunk(type: string, data: Uint8Array) {
  const body = concat(ascii(type), data)
  return concat(u32be(data.length), body, u32be(crc32(body)))
}

/** A 1×1 RGBA PNG of one colour. */
export function png(rgba: [number, number, number, number] = [255, 0, 0, 255]) {
  const header = concat(u32be(1), u32be(1), [8, 6, 0, 0, 0])
  return concat([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(new Uint8Array([0, ...rgba]))), pngChunk('IEND', new Uint8Array()))
}

/** An 8×8 grey baseline JPEG: one block whose DC difference and AC run are both coded by one-symbol Huffman tables. */
export function jpeg() {
  const huffman = (tableClass: number) => [0xff, 0xc4, 0x00, 0x14, tableClass, 1, ...new Array(15).fill(0), 0x00]
  return concat(
    [0xff, 0xd8],
    [0xff, 0xe0, 0x00, 0x10, ...ascii('JFIF'), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0],
    [0xff, 0xdb, 0x00, 0x43, 0x00, ...new Array(64).fill(1)],
    [0xff, 0xc0, 0x00, 0x0b, 8, 0, 8, 0, 8, 1, 1, 0x11, 0],
    huffman(0x00),
    huffman(0x10),
    [0xff, 0xda, 0x00, 0x08, 1, 1, 0x00, 0, 63, 0],
    // DC category 0 ("0"), end of block ("0"), padded with ones.
    [0x3f],
    [0xff, 0xd9],
  )
}

/** The classic 1×1 transparent GIF89a. */
export const gif = () => Uint8Array.from(atob('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=='), (c) => c.charCodeAt(0))

/** A 1×1 lossless WebP (VP8L). */
export const webp = () => Uint8Array.from(atob('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=='), (c) => c.charCodeAt(0))

/** An ICO holding one 1×1 PNG image (PNG entries are valid in ICO files). */
export function ico() {
  const image = png([0, 0, 255, 255])
  const le32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]
  return concat([0, 0, 1, 0, 1, 0], [1, 1, 0, 0, 1, 0, 32, 0, ...le32(image.length), ...le32(22)], image)
}

export const svg = () => ascii('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><script>alert(document.cookie)</script></svg>')

/** A GIF header followed by HTML: an image to a sniffer that stops early, a page to one that reads on. */
export const polyglot = () => concat(gif(), ascii('<html><body><script>fetch("/api/v1/user/profile")</script></body></html>'))
