import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import { Elysia } from 'elysia'
import { perApp, type AppContext } from '../context.ts'
import { sessions, users } from '../db/schema/index.ts'
import { ApiError } from '../errors.ts'
import { verifyJwt } from '../lib/jwt.ts'
import { ACCESS_AUDIENCE } from '../modules/auth/service.ts'

export type SessionUser = typeof users.$inferSelect

export interface SessionCaller {
  kind: 'session'
  user: SessionUser
  sessionId: string
  impersonatorId: string | null
}

export const carriesKey = (headers: Headers) => headers.has('x-api-key') || /^bearer\s/i.test(headers.get('authorization') ?? '')

/** Resolves the dashboard session behind an `access_token` cookie, or null. One prepared query per request. */
export function sessionResolver(ctx: AppContext) {
  const lookup = ctx.db
    .select({ user: users, impersonatorId: sessions.impersonatorId })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.id, sql.placeholder('sid')), eq(sessions.userId, sql.placeholder('uid')), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)))
    .prepare('auth_session')

  return async (accessToken: string | undefined): Promise<SessionCaller | null> => {
    if (!accessToken) return null
    const claims = await verifyJwt(accessToken, ctx.keys.accessToken, ctx.config.baseUrl, ACCESS_AUDIENCE)
    if (!claims || typeof claims.sid !== 'string' || typeof claims.sub !== 'string') return null
    const [row] = await lookup.execute({ sid: claims.sid, uid: claims.sub })
    return row ? { kind: 'session', user: row.user, sessionId: claims.sid, impersonatorId: row.impersonatorId } : null
  }
}

/** The one credential plugin: `{ user: true }` on a route requires a signed-in dashboard user. */
export const authPlugin = perApp((ctx) => {
  const resolveSession = sessionResolver(ctx)
  return new Elysia({ name: 'auth' }).macro({
    user: {
      async resolve({ request, cookie }) {
        // A request with a key is a key request (SPEC 5.11) and keys have no personal area.
        if (carriesKey(request.headers)) throw new ApiError('DASHBOARD_ONLY', 'This route needs a signed-in dashboard session; API keys cannot use it')
        const caller = await resolveSession(cookie.access_token?.value as string | undefined)
        if (!caller) throw new ApiError('UNAUTHENTICATED', 'Sign in first: the access_token cookie is missing, invalid or expired')
        return { caller, user: caller.user }
      },
    },
  })
})
