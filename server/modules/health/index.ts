import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'

export const API_VERSION = '1.0.0'

const HealthResponse = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('degraded')]),
  version: t.String(),
  database: t.Union([t.Literal('ok'), t.Literal('unavailable')]),
}, { $id: 'Health', examples: [{ status: 'ok', version: API_VERSION, database: 'ok' }, { status: 'degraded', version: API_VERSION, database: 'unavailable' }] })

export const healthModule = (ctx: AppContext) =>
  new Elysia().get(
    '/health',
    async ({ set }) => {
      if (await ctx.database.ping()) return { status: 'ok' as const, version: API_VERSION, database: 'ok' as const }
      set.status = 503
      return { status: 'degraded' as const, version: API_VERSION, database: 'unavailable' as const }
    },
    {
      response: { 200: HealthResponse, 503: HealthResponse },
      detail: { operationId: 'getHealth', tags: ['Health'], summary: 'Service and database health', description: 'Needs no credentials. 200 with `status: ok` when the database answers, 503 with `status: degraded` when it does not; load balancers can use it as a readiness check.', security: [] },
    },
  )
