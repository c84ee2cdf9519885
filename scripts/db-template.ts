// `npm run db:template` (also run by postinstall and in the Docker build): the migrated data directory a
// fresh embedded database starts from (server/db/template.ts). Never fails an install: without a
// template the first start runs initdb and every migration itself, only slower.
import { mkdir, readdir, rm } from 'node:fs/promises'
import { openDatabase } from '../server/db/client.ts'
import { TEMPLATE_DIR, templatePath } from '../server/db/template.ts'

try {
  const path = templatePath()
  if (await Bun.file(path).exists()) {
    console.log(`chorus: the embedded database template is up to date (${path})`)
  } else {
    const started = performance.now()
    const database = openDatabase('memory://', '')
    await database.migrate()
    const dump = await database.dumpDataDir!()
    await database.close()
    await mkdir(TEMPLATE_DIR, { recursive: true })
    // Templates of other migrations or PGlite versions are never used again.
    for (const name of await readdir(TEMPLATE_DIR)) if (name.startsWith('pglite-')) await rm(`${TEMPLATE_DIR}/${name}`)
    await Bun.write(path, Bun.gzipSync(new Uint8Array(await dump.arrayBuffer())))
    console.log(`chorus: made the embedded database template in ${((performance.now() - started) / 1000).toFixed(1)} s (${path})`)
  }
} catch (error) {
  console.warn(`chorus: no embedded database template (${(error as Error).message}); the first start will create the database itself`)
}
