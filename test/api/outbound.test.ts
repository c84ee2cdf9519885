import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportJWK, generateKeyPair } from 'jose'
import { createDns } from '../../server/lib/dns.ts'
import { createOutbound, OutboundRefused, type Outbound } from '../../server/lib/outbound.ts'
import { customerToken, identify } from '../helpers/end-users.ts'
import { startDnsServer } from '../helpers/dns-server.ts'
import { workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

// Private addresses are allowed here (the servers of these tests listen on 127.0.0.1), which is
// exactly when the metadata ranges must still be refused. Host names resolve through a local DNS server.
let h: Harness
let dns: Awaited<ReturnType<typeof startDnsServer>>
let server: ReturnType<typeof Bun.serve>
let hits: { path: string; host: string | null }[] = []
let jwk: Record<string, unknown>
let pair: Awaited<ReturnType<typeof generateKeyPair>>
let userCalls: Outbound
let strict: Outbound

beforeAll(async () => {
  dns = await startDnsServer()
  dns.records.A.set('api.test', ['127.0.0.1'])
  dns.records.A.set('jwks.test', ['127.0.0.1'])
  dns.records.A.set('mixed.test', ['93.184.216.34', '10.0.0.7'])
  pair = await generateKeyPair('RS256', { extractable: true })
  jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const path = new URL(request.url).pathname
      hits.push({ path, host: request.headers.get('host') })
      if (path === '/jwks.json') return Response.json({ keys: [jwk] })
      if (path === '/redirect') return new Response(null, { status: 302, headers: { location: `http://api.test:${server.port}/jwks.json` } })
      if (path === '/big') return new Response('x'.repeat(2 * 1024 * 1024))
      if (path === '/big-jwks') return Response.json({ keys: [jwk], padding: 'x'.repeat(100 * 1024) })
      if (path === '/slow') {
        await Bun.sleep(2000)
        return new Response('late')
      }
      return new Response(`echo ${request.method} ${await request.text()}`)
    },
  })
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true', DNS_RESOLVER: dns.address })
  userCalls = h.ctx.outbound
  strict = createOutbound({ dns: createDns(dns.address), allowPrivate: false, operatorAllowPrivate: true })
}, 60_000)
afterAll(async () => {
  server.stop(true)
  dns.close()
  await h.close()
})

const url = (path: string, host = 'api.test') => `http://${host}:${server.port}${path}`

async function jwksWorkspace(jwksUrl: string) {
  const w = await workspaceFixture(h)
  const created = await w.owner.post(`/api/v1/workspaces/${w.slug}/jwt-config`, { algorithm: 'RS256', jwks_url: jwksUrl })
  expect(created.status).toBe(201)
  return w
}
const token = () => customerToken(pair.privateKey, { alg: 'RS256', kid: 'k1' })

describe('happy', () => {
  test('resolves through DNS_RESOLVER, connects to the checked address and keeps the name in Host', async () => {
    hits = []
    const response = await userCalls.fetch(url('/echo'), { method: 'POST', body: 'hello', headers: { 'content-type': 'text/plain' } })
    expect(response.status).toBe(200)
    expect(response.text()).toBe('echo POST hello')
    expect(response.truncated).toBe(false)
    expect(hits).toEqual([{ path: '/echo', host: `api.test:${server.port}` }])
    expect(dns.queries).toContain('A api.test')
  })

  test('the JWKS fetch goes through the guard and the configured resolver', async () => {
    const w = await jwksWorkspace(url('/jwks.json', 'jwks.test'))
    expect((await identify(h, w.slug, await token())).status).toBe(200)
    expect(dns.queries).toContain('A jwks.test')
  })

  test('an operator-configured base URL may reach a private address when configuration allows it', async () => {
    const base = url('/v1')
    const response = await strict.fetch(url('/v1/messages'), { operatorBase: base })
    expect(response.status).toBe(200)
    // The same address chosen by a user is refused under the same policy.
    await expect(strict.fetch(url('/v1/messages'))).rejects.toBeInstanceOf(OutboundRefused)
  })
})

describe('errors', () => {
  test('redirects are returned, never followed', async () => {
    hits = []
    const response = await userCalls.fetch(url('/redirect'))
    expect(response.status).toBe(302)
    expect(hits.map((hit) => hit.path)).toEqual(['/redirect'])
  })

  test('a JWKS address that redirects is refused, and the redirect target is never fetched', async () => {
    const w = await jwksWorkspace(url('/redirect', 'jwks.test'))
    hits = []
    const res = await identify(h, w.slug, await token())
    expect(res.status).toBe(401)
    expect(hits.map((hit) => hit.path)).toEqual(['/redirect'])
  })

  test('oversized answers are cut at maxBytes', async () => {
    const response = await userCalls.fetch(url('/big'), { maxBytes: 1000 })
    expect(response.status).toBe(200)
    expect(response.body.length).toBe(1000)
    expect(response.truncated).toBe(true)
    expect(await response.toResponse().text()).toHaveLength(1000)
    const whole = await userCalls.fetch(url('/big'))
    expect(whole.body.length).toBe(1024 * 1024)
    expect(whole.truncated).toBe(true)
  })

  test('an oversized JWKS is cut and refused', async () => {
    const w = await jwksWorkspace(url('/big-jwks', 'jwks.test'))
    const res = await identify(h, w.slug, await token())
    expect(res.status).toBe(401)
    expect(res.body.message).toMatch(/JWKS|key/)
  })

  test('the time limit covers the whole exchange', async () => {
    const started = performance.now()
    await expect(userCalls.fetch(url('/slow'), { timeoutMs: 200 })).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(performance.now() - started).toBeLessThan(1500)
  })

  test('unresolvable hosts, other schemes and credentials are refused before any connection', async () => {
    for (const [target, reason] of [
      ['http://nowhere.test/x', /does not resolve/],
      ['ftp://api.test/x', /http or https/],
      [`http://user:pw@api.test:${server.port}/x`, /credentials/],
      ['not a url', /not a valid URL/],
    ] as const) {
      await expect(userCalls.fetch(target)).rejects.toThrow(reason)
    }
    await expect(strict.check('http://93.184.216.34/jwks.json', { httpsOnly: true })).rejects.toThrow(/https/)
  })
})

describe('security', () => {
  test('metadata addresses are refused even with private addresses allowed, for users and operators alike', async () => {
    const everything = createOutbound({ dns: createDns(dns.address), allowPrivate: true, operatorAllowPrivate: true })
    for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/latest/meta-data/', 'http://100.100.100.200/', 'http://0.0.0.0:80/', 'http://[::ffff:169.254.169.254]/']) {
      await expect(everything.fetch(target)).rejects.toThrow(/reserved or metadata/)
      await expect(everything.fetch(target, { operatorBase: new URL(target).origin })).rejects.toThrow(/reserved or metadata/)
    }
  })

  test('the JWKS address refuses metadata when saved, with private addresses allowed', async () => {
    const w = await workspaceFixture(h)
    for (const jwksUrl of ['http://169.254.169.254/jwks.json', 'http://[fd00:ec2::254]/jwks.json']) {
      const res = await w.owner.post(`/api/v1/workspaces/${w.slug}/jwt-config`, { algorithm: 'RS256', jwks_url: jwksUrl })
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', 'jwks_url'])
      expect(res.body.detail[0].msg).toMatch(/metadata/)
    }
  })

  test('a JWKS host re-pointed at a metadata address (IPv4 or IPv6) is refused at fetch time', async () => {
    // The address was private but allowed when saved; every fetch checks again.
    for (const [type, address] of [['A', '169.254.169.254'], ['AAAA', 'fd00:ec2::254']] as const) {
      const name = `rebind-${type.toLowerCase()}.test`
      dns.records.A.set(name, ['127.0.0.1'])
      dns.records.AAAA.set(name, ['::1'])
      const w = await jwksWorkspace(url('/jwks.json', name))
      // One metadata address among the answers is enough to refuse.
      dns.records[type].set(name, [address])
      await Bun.sleep(1100) // the answers' 1 s TTL
      hits = []
      const res = await identify(h, w.slug, await token())
      expect(res.status).toBe(401)
      expect(res.body.message).toMatch(/reserved or metadata/)
      expect(hits).toEqual([])
    }
  })

  test('private addresses are refused for user-chosen URLs unless allowed; a host with any private address is refused', async () => {
    await expect(strict.fetch(url('/echo'))).rejects.toThrow(/loopback, private or link-local/)
    await expect(strict.check('http://mixed.test/')).rejects.toThrow(/10\.0\.0\.7/)
    await expect(strict.check('http://[::1]/')).rejects.toBeInstanceOf(OutboundRefused)
  })

  test('an operator call must stay under its configured base', async () => {
    await expect(strict.fetch(url('/v2/messages'), { operatorBase: url('/v1') })).rejects.toThrow(/under the configured/)
    await expect(strict.fetch(url('/v10'), { operatorBase: url('/v1') })).rejects.toThrow(/under the configured/)
    await expect(strict.fetch(url('/v1/x', 'jwks.test'), { operatorBase: url('/v1') })).rejects.toThrow(/under the configured/)
  })
})
