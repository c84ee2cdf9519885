import { Enum } from '../../lib/schema.ts'
import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError, notFound } from '../../errors.ts'
import { applyBillingEvent, verifyBillingSignature, type BillingEvent } from './service.ts'

export const billingModule = (ctx: AppContext) =>
  new Elysia().post('/billing/webhook', async ({ body, request }) => {
    const secret = ctx.config.billingWebhookSecret
    if (!secret) throw notFound('Billing webhook')
    await verifyBillingSignature(body, request.headers.get('stripe-signature'), secret)
    let event: BillingEvent
    try {
      event = JSON.parse(body)
    } catch {
      throw new ApiError('BAD_REQUEST', 'The event body is not JSON')
    }
    if (typeof event?.id !== 'string' || typeof event.type !== 'string') throw new ApiError('BAD_REQUEST', 'The event has no id or type')
    const outcome = await applyBillingEvent(ctx, event)
    ctx.log.info('billing event', { event_id: event.id, type: event.type, outcome })
    return { received: true, outcome }
  }, {
    // The signature covers the exact bytes, so the body is read as text and parsed after verification.
    parse: 'text',
    body: t.String({ maxLength: 512 * 1024 }),
    response: { 200: t.Object({ received: t.Boolean(), outcome: Enum(['applied', 'duplicate', 'ignored']) }, { $id: 'BillingEventReceipt', examples: [{ received: true, outcome: 'applied' }] }) },
    detail: { operationId: 'receiveBillingEvent', tags: ['Billing'], security: [], summary: 'Billing provider events (Stripe-compatible signature in Stripe-Signature)', description: 'Called by the billing provider, not by clients. The raw body must carry a valid `Stripe-Signature` for BILLING_WEBHOOK_SECRET (400 BAD_REQUEST otherwise; 404 when no secret is configured). Events are applied once: a repeated event id answers `duplicate`, an unknown type `ignored`.' },
  })
