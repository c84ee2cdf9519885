// A real OpenID provider (panva's oidc-provider) on a random loopback port, for the identity-provider
// login tests. Its interaction step logs in `account` (changeable per test) without any UI, or answers
// with `denyWith` as the provider's error. `tamperIdToken` lets a test play a misbehaving provider: the
// token response's ID token is re-signed with the provider's own key after the test changed its claims.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose'
import Provider from 'oidc-provider'

export interface TestAccount {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
}

export interface TestIdp {
  issuer: string
  account: TestAccount
  denyWith: { error: string; error_description?: string } | null
  tamperIdToken: ((claims: Record<string, unknown>) => Record<string, unknown>) | null
  /** Signs arbitrary claims with this provider's key (what a provider, or someone holding its key, could mint). */
  sign(claims: Record<string, unknown>): Promise<string>
  close(): Promise<void>
}

async function readBody(req: IncomingMessage) {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

export async function startTestIdp(options: { clientId: string; clientSecret: string; redirectUris: string[]; kid: string }): Promise<TestIdp> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), kid: options.kid, alg: 'RS256', use: 'sig' }

  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const idp: TestIdp = {
    issuer,
    account: { sub: 'alice', email: 'alice@example.com', email_verified: true, name: 'Alice' },
    denyWith: null,
    tamperIdToken: null,
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: options.kid }).sign(privateKey),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }

  const provider = new Provider(issuer, {
    clients: [{
      client_id: options.clientId,
      client_secret: options.clientSecret,
      redirect_uris: options.redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    jwks: { keys: [jwk] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 600, Session: 600 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, sub: string) {
      const account = { ...idp.account }
      if (sub !== account.sub) return undefined
      return { accountId: sub, claims: async () => account }
    },
  } as never)

  const callback = provider.callback()

  async function interaction(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res)
    if (idp.denyWith) {
      await provider.interactionFinished(req, res, idp.denyWith, { mergeWithLastSubmission: false })
      return
    }
    const accountId = idp.account.sub
    const grant = new provider.Grant({ accountId, clientId: details.params.client_id as string })
    grant.addOIDCScope(String(details.params.scope))
    const grantId = await grant.save()
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false })
  }

  async function token(req: IncomingMessage, res: ServerResponse) {
    // Forward to the real token endpoint, then rewrite the ID token of a successful answer.
    const body = await readBody(req)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value
    const upstream = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/token?passthrough=1`, { method: 'POST', headers, body })
    const payload = await upstream.json() as Record<string, unknown>
    if (upstream.ok && typeof payload.id_token === 'string' && idp.tamperIdToken) {
      payload.id_token = await idp.sign(idp.tamperIdToken({ ...decodeJwt(payload.id_token) }))
    }
    res.writeHead(upstream.status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(JSON.stringify(payload))
  }

  server.on('request', (req, res) => {
    const path = req.url ?? '/'
    const run = path.startsWith('/interaction/') ? interaction(req, res)
      : path === '/token' && req.method === 'POST' && idp.tamperIdToken ? token(req, res)
      : Promise.resolve(callback(req, res))
    run.catch((error) => {
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(String(error))
    })
  })
  return idp
}
