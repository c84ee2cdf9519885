// The container files, checked where no container engine runs (this CI has none): the rules a
// deploy relies on, the compose file parsed, and the environment it gives Chorus validated by the
// server's own configuration loader.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { getConfig } from '../../server/config.ts'

const root = new URL('../../', import.meta.url).pathname
const read = (path: string) => readFileSync(root + path, 'utf8')
const dockerfile = read('docker/Dockerfile')
const ignore = read('.dockerignore').split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'))
const compose = Bun.YAML.parse(read('docker/compose.yaml')) as {
  services: Record<string, { environment?: Record<string, string>, ports?: string[], volumes?: string[], build?: unknown }>
  volumes: Record<string, unknown>
}

/** Docker Compose's interpolation: ${X}, ${X:-default}, ${X:?error}. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, kind?: string, rest?: string) => {
    const set = env[name]
    if (set) return set
    if (kind === '?') throw new Error(`${name} is required: ${rest}`)
    return kind === '-' ? rest ?? '' : ''
  })
}

const runLines = dockerfile.split('\n').filter((line) => /^\s*(RUN|&&|\|\|)/.test(line) || /\\$/.test(line))

describe('.dockerignore', () => {
  test('keeps installed packages, data and secrets out of the build context', () => {
    for (const entry of ['**/node_modules', 'data/', '.env', '.env.*', '.git']) expect(ignore).toContain(entry)
  })
})

describe('docker/Dockerfile', () => {
  test('installs exactly from the lockfile, with no fallback to an unpinned install', () => {
    expect(dockerfile).toContain('COPY package.json package-lock.json ./')
    expect(dockerfile).toMatch(/RUN npm ci --omit=dev/)
    expect(dockerfile).not.toContain('||')
    expect(runLines.join('\n')).not.toContain('bun install')
    // The two `npm install`s, each apart from the runtime packages: esbuild and patch-package, at the versions the lockfile pins.
    for (const tool of ['esbuild', 'patch-package']) {
      expect(dockerfile.match(new RegExp(`npm install[^"]*"${tool}@\\$\\(node -p "require\\('/app/package-lock.json'\\)\\.packages\\['node_modules/${tool}'\\]\\.version"\\)"`, 'g'))).toHaveLength(1)
    }
    expect(dockerfile.match(/npm install/g)).toHaveLength(2)
  })

  test('applies the same patches to the runtime packages as a development install', () => {
    const stage = dockerfile.slice(dockerfile.indexOf('AS deps'), dockerfile.indexOf('AS widget-deps'))
    expect(stage).toContain('COPY patches ./patches')
    expect(stage).toMatch(/cd \/app && \/patcher\/node_modules\/\.bin\/patch-package --error-on-fail/)
    expect(JSON.parse(read('package.json')).scripts.postinstall).toStartWith('bun scripts/apply-patches.ts && ')
    expect(ignore).not.toContain('patches')
  })

  test('builds the widget with the lockfile\'s esbuild and no test toolchain', () => {
    const stage = dockerfile.slice(dockerfile.indexOf('AS widget-deps'), dockerfile.indexOf('AS widget\n'))
    expect(stage).toContain("packages['node_modules/esbuild'].version")
    expect(stage).not.toContain('package.json')
    for (const tool of ['playwright', 'axe', 'typescript']) expect(stage.toLowerCase()).not.toMatch(new RegExp(`install[^\\n]*${tool}`))
  })

  test('runs as a non-root user with a health check and leaves WEB_CONCURRENCY to the cgroup', () => {
    expect(dockerfile).toMatch(/^USER bun$/m)
    expect(dockerfile).toContain('HEALTHCHECK')
    expect(dockerfile).not.toMatch(/WEB_CONCURRENCY=/)
  })
})

describe('docker/compose.yaml', () => {
  const chorus = compose.services.chorus!
  const env = { SECRET_KEY: 'k'.repeat(64), POSTGRES_PASSWORD: 'p4ss' }

  test('takes every secret from the environment and refuses to start without them', () => {
    expect(compose.services.postgres!.environment!.POSTGRES_PASSWORD).toBe('${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}')
    expect(() => interpolate(chorus.environment!.SECRET_KEY!, {})).toThrow('SECRET_KEY is required')
    expect(() => interpolate(chorus.environment!.DATABASE_URL!, {})).toThrow('POSTGRES_PASSWORD is required')
    expect(read('docker/compose.yaml')).not.toMatch(/PASSWORD: (?!\$\{)\S/)
  })

  test('binds the port to localhost by default and keeps data in named volumes', () => {
    expect(chorus.ports!.map((port) => interpolate(port, {}))).toEqual(['127.0.0.1:3000:3000'])
    expect(chorus.volumes).toContain('chorus-data:/data')
    expect(Object.keys(compose.volumes).sort()).toEqual(['chorus-data', 'pgdata'])
    expect(chorus.environment).not.toHaveProperty('WEB_CONCURRENCY')
  })

  test('gives Chorus an environment its configuration loader accepts, SMTP included', () => {
    const resolved = Object.fromEntries(Object.entries(chorus.environment!).map(([name, value]) => [name, interpolate(String(value), env)]))
    const config = getConfig(resolved)
    expect(config.databaseUrl).toBe('postgres://chorus:p4ss@postgres:5432/chorus')
    expect(config.redisUrl).toBe('redis://redis:6379')
    expect(config.smtpUrl).toBeUndefined()

    const withMail = Object.fromEntries(Object.entries(chorus.environment!).map(([name, value]) => [name, interpolate(String(value), { ...env, SMTP_URL: 'smtps://u:p@mail.example.com:465', EMAIL_FROM: 'Acme <feedback@example.com>' })]))
    expect(getConfig(withMail).smtpUrl).toBe('smtps://u:p@mail.example.com:465')
    expect(getConfig(withMail).emailFrom).toBe('Acme <feedback@example.com>')
  })
})
