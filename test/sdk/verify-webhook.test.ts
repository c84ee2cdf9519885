// verifyWebhook against signatures made by the reference `standardwebhooks` package, so both agree on the scheme.
import { describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook, WebhookVerificationError, type WebhookEvent, type WebhookEventType } from '../../sdk/src/index.ts'

const randomSecret = () => `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`
const SECRET = randomSecret()
const EVENT = { id: 'evt_1', type: 'post.created', timestamp: '2026-11-22T09:30:00.000Z', workspace_id: 'ws_1', data: { id: 'post_1', title: 'Dark mode ✨' } }
const BODY = JSON.stringify(EVENT)

/** A delivery as the server sends it (docs/api.md#webhooks), signed by the reference implementation. */
function delivery(sentAt = new Date(), secret = SECRET, body = BODY) {
  const timestamp = Math.floor(sentAt.getTime() / 1000)
  return {
    'webhook-id': EVENT.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': new Webhook(secret).sign(EVENT.id, new Date(timestamp * 1000), body),
    'x-chorus-event': EVENT.type,
  }
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(() => undefined, (thrown: unknown) => thrown)
  expect(error).toBeInstanceOf(WebhookVerificationError)
  expect(error).toMatchObject({ code: 'WEBHOOK_VERIFICATION_FAILED', status: null })
  return (error as Error).message
}

describe('verifyWebhook', () => {
  test('accepts a valid delivery and returns the typed event', async () => {
    const event: WebhookEvent = await verifyWebhook(BODY, delivery(), SECRET)
    expect(event).toEqual(EVENT as never)
    expect((event.data as unknown as { title: string }).title).toBe('Dark mode ✨')
  })

  test('the event narrows by type in a switch, to the data the document gives that kind', async () => {
    const post = { id: 'post_1', title: 'Dark mode' }
    const kinds: [WebhookEventType, unknown][] = [
      ['post.created', { post }],
      ['status.changed', { post, from_status: 'Open', to_status: 'Planned' }],
      ['comment.created', { comment: { id: 'cmt_1', body: 'Yes please' }, post_id: 'post_1' }],
      ['vote.created', { vote: { id: 'vote_1', post_id: 'post_1', voter: { type: 'end_user', id: 'eu_1' } }, votes: 3 }],
    ]
    const seen: string[] = []
    for (const [type, data] of kinds) {
      const body = JSON.stringify({ ...EVENT, type, data })
      const event = await verifyWebhook(body, delivery(new Date(), SECRET, body), SECRET)
      switch (event.type) {
        case 'post.created': seen.push(`new ${event.data.post.title}`); break
        case 'status.changed': seen.push(`${event.data.post.id} ${event.data.from_status}→${event.data.to_status}`); break
        case 'comment.created': seen.push(`comment ${event.data.comment.body} on ${event.data.post_id}`); break
        case 'vote.created': seen.push(`${event.data.vote.voter.type} voted, ${event.data.votes} votes`); break
        default: seen.push(event.type)
      }
    }
    expect(seen).toEqual(['new Dark mode', 'post_1 Open→Planned', 'comment Yes please on post_1', 'end_user voted, 3 votes'])
  })

  test('takes a Headers object, any header case, and the body as bytes', async () => {
    const upper = Object.fromEntries(Object.entries(delivery()).map(([name, value]) => [name.toUpperCase(), value]))
    expect((await verifyWebhook(BODY, upper, SECRET)).id).toBe('evt_1')
    expect((await verifyWebhook(new TextEncoder().encode(BODY), new Headers(delivery()), SECRET)).id).toBe('evt_1')
  })

  test('accepts any valid v1 signature in the list (secret rotation)', async () => {
    const headers = delivery()
    const old = delivery(new Date(), randomSecret())['webhook-signature']
    headers['webhook-signature'] = `v2,AAAA ${old} ${headers['webhook-signature']}`
    expect((await verifyWebhook(BODY, headers, SECRET)).id).toBe('evt_1')
  })

  test('refuses a tampered body or id', async () => {
    await refusal(verifyWebhook(BODY.replace('Dark', 'Lite'), delivery(), SECRET))
    await refusal(verifyWebhook(BODY, { ...delivery(), 'webhook-id': 'evt_2' }, SECRET))
    await refusal(verifyWebhook(`${BODY} `, delivery(), SECRET))
  })

  test('refuses a timestamp more than five minutes away, either side, and a changed timestamp', async () => {
    const now = Date.now()
    expect(await refusal(verifyWebhook(BODY, delivery(new Date(now - 301_000)), SECRET))).toContain('timestamp')
    await refusal(verifyWebhook(BODY, delivery(new Date(now + 301_000)), SECRET))
    expect((await verifyWebhook(BODY, delivery(new Date(now - 290_000)), SECRET)).id).toBe('evt_1')
    const headers = delivery()
    headers['webhook-timestamp'] = String(Number(headers['webhook-timestamp']) - 1)
    await refusal(verifyWebhook(BODY, headers, SECRET))
  })

  test('refuses the wrong secret, a malformed secret and missing headers', async () => {
    await refusal(verifyWebhook(BODY, delivery(), randomSecret()))
    await refusal(verifyWebhook(BODY, delivery(), 'whsec_not base64!'))
    const { 'webhook-signature': _, ...unsigned } = delivery()
    expect(await refusal(verifyWebhook(BODY, unsigned, SECRET))).toContain('webhook-signature')
    await refusal(verifyWebhook(BODY, { ...delivery(), 'webhook-signature': 'v1,' }, SECRET))
  })

  test('agrees with standardwebhooks on what it accepts', async () => {
    const headers = delivery()
    expect(new Webhook(SECRET).verify(BODY, headers)).toEqual(await verifyWebhook(BODY, headers, SECRET))
  })
})
