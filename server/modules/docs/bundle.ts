import { readdirSync, readFileSync } from 'node:fs'
import { brotliDecompressSync } from 'node:zlib'

/**
 * The API reference page's script: Scalar's standalone browser bundle (`@scalar/api-reference`, MIT),
 * vendored Brotli-compressed as one file by scripts/vendor-scalar.ts, so a production install carries
 * ~1 MB instead of the ~290 MB of packages it is built from. Its version is in the file's name and the URL.
 */
export const VENDOR_DIR = `${import.meta.dir}/vendor`
export const vendoredBundleName = (version: string) => `scalar-api-reference-${version}.js.br`

const [file] = readdirSync(VENDOR_DIR).filter((name) => /^scalar-api-reference-.+\.js\.br$/.test(name))
if (!file) throw new Error(`No vendored API reference bundle in ${VENDOR_DIR}: run bun scripts/vendor-scalar.ts`)
/** The vendored version, e.g. `1.72.1`. */
export const SCALAR_VERSION = file.slice('scalar-api-reference-'.length, -'.js.br'.length)

let brotli: Uint8Array<ArrayBuffer> | undefined
let plain: Uint8Array<ArrayBuffer> | undefined
/** The bundle as vendored (Brotli), read on first use. */
export const brotliBundle = () => (brotli ??= new Uint8Array(readFileSync(`${VENDOR_DIR}/${file}`)))
/** The bundle itself, decompressed once on first use (for clients that take no Brotli). */
export const plainBundle = () => (plain ??= new Uint8Array(brotliDecompressSync(brotliBundle())))
