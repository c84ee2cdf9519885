// `bun scripts/openapi.ts` writes sdk/openapi.json and the SDK's generated types from the server's routes;
// `--check` writes nothing and exits 1 when either committed file differs (CI runs it to catch drift).
import { readFile, writeFile } from 'node:fs/promises'
import { astToString, COMMENT_HEADER, default as openapiTS } from 'openapi-typescript'
import { createApp } from '../server/app.ts'
import { getConfig } from '../server/config.ts'
import { openDatabase } from '../server/db/client.ts'
import { buildOpenApiDocument } from '../server/modules/docs/openapi.ts'

const root = new URL('..', import.meta.url)
const DOCUMENT_FILE = new URL('sdk/openapi.json', root)
const TYPES_FILE = new URL('sdk/src/generated/openapi.ts', root)

/** Object keys sorted at every depth, so the file only changes when the document does. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]))
}

async function buildDocument() {
  // The document comes from route schemas only; the database is never queried, so a throwaway one suffices.
  const config = getConfig({ DATABASE_URL: 'memory://', SECRET_KEY: 'openapi-generation-only-secret-key-0123456789', LOG_LEVEL: 'silent' })
  const database = openDatabase(config.databaseUrl, config.dataDir)
  const { app, ctx } = await createApp({ config, database })
  try {
    return sortKeys(buildOpenApiDocument(app)) as Parameters<typeof openapiTS>[0] & object
  } finally {
    ctx.limiter.close()
    await database.close()
  }
}

async function render() {
  const document = await buildDocument()
  const types = astToString(await openapiTS(structuredClone(document), { alphabetize: true, silent: true }))
  return {
    [DOCUMENT_FILE.pathname]: `${JSON.stringify(document, null, 2)}\n`,
    [TYPES_FILE.pathname]: `${COMMENT_HEADER.replace('openapi-typescript.', 'openapi-typescript from sdk/openapi.json (npm run openapi).')}${types}`,
  }
}

const check = process.argv.includes('--check')
const stale: string[] = []
for (const [file, expected] of Object.entries(await render())) {
  const current = await readFile(file, 'utf8').catch(() => undefined)
  if (current === expected) continue
  stale.push(file)
  if (!check) await writeFile(file, expected)
}
const relative = (file: string) => file.slice(root.pathname.length)
if (check && stale.length) {
  console.error(`Out of date with the server's routes: ${stale.map(relative).join(', ')}. Run \`npm run openapi\` and commit the result.`)
  process.exit(1)
}
console.log(check ? 'sdk/openapi.json and its types match the server.' : stale.length ? `Wrote ${stale.map(relative).join(', ')}` : 'Already up to date.')
