// Vendors the API reference page's script: Scalar's standalone browser bundle from the pinned
// `@scalar/api-reference` (a dev dependency: its ~290 MB of packages, mostly the Vue sources the bundle is
// built from, stay out of a production install), Brotli-compressed into one file the server serves as is.
// Run after changing the dev dependency's version: `bun scripts/vendor-scalar.ts` (test/api/methods.test.ts
// fails while the vendored version and the dependency's differ).
import { readFileSync, readdirSync, rmSync } from 'node:fs'
import { brotliCompressSync, constants as zlib } from 'node:zlib'
import { VENDOR_DIR, vendoredBundleName } from '../server/modules/docs/bundle.ts'

const entry = import.meta.resolve('@scalar/api-reference')
const { version, license } = JSON.parse(readFileSync(new URL('../package.json', entry), 'utf8')) as { version: string; license: string }
const bundle = readFileSync(new URL('browser/standalone.js', entry))
for (const old of readdirSync(VENDOR_DIR).filter((name) => name.startsWith('scalar-'))) rmSync(`${VENDOR_DIR}/${old}`)
const compressed = brotliCompressSync(bundle, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: bundle.length } })
await Bun.write(`${VENDOR_DIR}/${vendoredBundleName(version)}`, compressed)
console.log(`vendored @scalar/api-reference ${version} (${license}): ${bundle.length} bytes, ${compressed.length} as Brotli`)
