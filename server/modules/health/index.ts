import { Elysia, t } from 'elysia'
import { readFileSync } from 'node:fs'
import type { AppContext } from '../../context.ts'

export const API_VERSION = '1.0.0'

/** The running release (package.json's version): what an operator compares with the release notes. */
export const SERVER_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version

const HealthResponse = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('degraded')]),
  version: t.String({ description: 'The API version (the `/api/v1` contract)' }),
  server_version: t.String({ description: "The server's release (its package version), e.g. to check an upgrade took" }),
  database: t.Union([t.Literal('ok'), t.Literal('unavailable')]),
  background: t.Union([t.Literal('ok'), t.Literal('starting'), t.Literal('restarting'), t.Literal('off')], {
    description: 'The background worker thread (event dispatch, webhook and chat delivery, e-mail): `restarting` while it is started again after a failure (nothing it held is lost; delivery resumes when it is back), `off` in a process that runs none.',
  }),
}, { $id: 'Health', examples: [{ status: 'ok', version: API_VERSION, server_version: '0.1.0', database: 'ok', background: 'ok' }, { status: 'degraded', version: API_VERSION, server_version: '0.1.0', database: 'unavailable', background: 'restarting' }] })

export const healthModule = (ctx: AppContext) =>
  new Elysia().get(
    '/health',
    async ({ set }) => {
      const background = ctx.background.state
      if (await ctx.database.ping()) return { status: 'ok' as const, version: API_VERSION, server_version: SERVER_VERSION, database: 'ok' as const, background }
      set.status = 503
      return { status: 'degraded' as const, version: API_VERSION, server_version: SERVER_VERSION, database: 'unavailable' as const, background }
    },
    {
      response: { 200: HealthResponse, 503: HealthResponse },
      detail: { operationId: 'getHealth', tags: ['Health'], summary: 'Service and database health', description: 'Needs no credentials. 200 with `status: ok` when the database answers, 503 with `status: degraded` when it does not; load balancers can use it as a readiness check. `background` reports the background worker; requests are served while it restarts, so it does not change the status.', security: [] },
    },
  )
