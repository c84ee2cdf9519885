import { and, eq, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { userIdentities, users } from '../../db/schema/index.ts'
import { randomToken, sealContext, timingSafeEqual, toBase64Url } from '../../lib/secrets.ts'
import { newId } from '../../lib/ids.ts'
import { issueSession, normalizeEmail } from '../auth/service.ts'
import { discover, exchangeCode, IdpError, validateIdToken, withUserInfo, type IdTokenClaims, type Region } from './oidc.ts'

export const STATE_COOKIE = 'idp_oauth_state'
export const STATE_SECONDS = 600

/** What the login remembers in the sealed cookie until the provider sends the browser back. */
interface LoginState {
  state: string
  nonce: string
  verifier: string
  region: Region
  issuer: string
  redirect_to: string
  locale: string
  /** Seconds since the epoch; the cookie's Max-Age is only a hint to the browser. */
  exp: number
}

const sealState = (ctx: AppContext, state: LoginState) => ctx.secrets.seal(JSON.stringify(state), sealContext.idpLoginState())
async function unsealState(ctx: AppContext, value: string): Promise<LoginState | null> {
  try {
    return JSON.parse(await ctx.secrets.unseal(value, sealContext.idpLoginState())) as LoginState
  } catch {
    return null
  }
}

export const callbackUrl = (ctx: AppContext) => `${ctx.config.baseUrl}/api/v1/auth/idp/callback`

async function s256(verifier: string) {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))))
}

/** Builds the provider's authorization URL and the sealed cookie value that must come back with it. */
export async function startLogin(ctx: AppContext, issuer: string, input: { region: Region; redirect_to: string; locale: string }) {
  const provider = await discover(ctx, issuer)
  const login: LoginState = {
    state: randomToken(),
    nonce: randomToken(),
    verifier: randomToken(48),
    region: input.region,
    issuer,
    redirect_to: input.redirect_to,
    locale: input.locale,
    exp: Math.floor(Date.now() / 1000) + STATE_SECONDS,
  }
  const url = new URL(provider.authorization_endpoint)
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: ctx.config.idpClientId!,
    redirect_uri: callbackUrl(ctx),
    scope: 'openid email profile',
    state: login.state,
    nonce: login.nonce,
    code_challenge: await s256(login.verifier),
    code_challenge_method: 'S256',
    ui_locales: input.locale,
  }).toString()
  return { location: url.toString(), cookie: await sealState(ctx, login) }
}

export interface CallbackInput {
  code?: string
  state?: string
  error?: string
  iss?: string
  cookie?: string
}

/**
 * Checks the returning browser against its sealed login (state, expiry, RFC 9207 `iss`), exchanges the
 * code at the issuer chosen before the redirect (never one inferred from the callback), validates the ID
 * token, then signs the user in. Throws IdpError on every failure, before anything is written.
 */
export async function finishLogin(ctx: AppContext, input: CallbackInput, userAgent: string | null) {
  const login = input.cookie ? await unsealState(ctx, input.cookie) : null
  if (!login) throw new IdpError('missing_state', 'the idp_oauth_state cookie is missing or was not sealed by this service')
  if (!input.state || !timingSafeEqual(input.state, login.state)) throw new IdpError('state_mismatch', 'state does not match this browser\'s login')
  if (login.exp < Date.now() / 1000) throw new IdpError('expired', 'the login took longer than 10 minutes')
  if (input.iss !== undefined && input.iss !== login.issuer) throw new IdpError('issuer_mismatch', `the response names issuer ${input.iss}, the login went to ${login.issuer}`)
  if (input.error) throw new IdpError(input.error === 'access_denied' ? 'access_denied' : 'idp_error', `the provider answered ${input.error}`)
  if (!input.code) throw new IdpError('idp_error', 'the provider sent neither code nor error')
  if (ctx.config.idpIssuers[login.region] !== login.issuer) throw new IdpError('issuer_mismatch', `the ${login.region} issuer changed during the login`)

  const provider = await discover(ctx, login.issuer)
  const tokens = await exchangeCode(ctx, provider, { code: input.code, redirectUri: callbackUrl(ctx), verifier: login.verifier })
  const claims = await withUserInfo(ctx, provider, await validateIdToken(ctx, provider, tokens.idToken, login.nonce), tokens.accessToken)
  const user = await signInIdentity(ctx, login.issuer, claims, login.locale)
  const session = await issueSession(ctx, user.id, { userAgent })
  return { user, session, redirectTo: login.redirect_to }
}

/**
 * The identity (issuer, sub) names the user. A first login links to an existing account only when the
 * provider vouches for the address (`email_verified: true`); an unverified address is refused outright,
 * because creating an account for it would let whoever controls the provider account claim that
 * address before its owner does.
 */
async function signInIdentity(ctx: AppContext, issuer: string, claims: IdTokenClaims, locale: string) {
  const email = typeof claims.email === 'string' ? normalizeEmail(claims.email) : undefined
  const [known] = await ctx.db
    .update(userIdentities)
    .set({ lastLoginAt: sql`now()`, ...(email ? { email } : {}) })
    .where(and(eq(userIdentities.issuer, issuer), eq(userIdentities.subject, claims.sub)))
    .returning({ userId: userIdentities.userId })
  if (known) {
    const [user] = await ctx.db.select().from(users).where(eq(users.id, known.userId))
    if (user) return user
  }
  if (!email) throw new IdpError('email_missing', 'the provider shared no e-mail address (scope email)')
  if (claims.email_verified !== true) throw new IdpError('email_unverified', `the provider does not vouch for ${email}`)

  return ctx.db.transaction(async (tx) => {
    const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : null
    await tx.insert(users).values({ id: newId('user'), email, name, locale: locale.slice(0, 35), emailVerified: true }).onConflictDoNothing()
    const [user] = await tx.update(users).set({ emailVerified: true, updatedAt: sql`now()` }).where(eq(users.email, email)).returning()
    if (!user) throw new Error('user vanished between insert and update')
    // A concurrent first login of the same identity already linked it: both end on the same user.
    await tx.insert(userIdentities).values({ issuer, subject: claims.sub, userId: user.id, email }).onConflictDoNothing()
    return user
  })
}
