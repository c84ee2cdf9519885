// A loop's wake-ups survive a listening connection that drops while the loop subscribes (server/db/work.ts).
import { expect, test } from 'bun:test'
import { wakeOnWork, type ListenForWork, type WorkTable } from '../../server/db/work.ts'

/** A listener that fails its first `failures` subscriptions, then records the callback it was given. */
function flakyListen(failures: number) {
  const state = { calls: 0, onWork: undefined as ((table: WorkTable) => void) | undefined, unlistened: 0 }
  const listen: ListenForWork = async (_tables, onWork) => {
    state.calls++
    if (state.calls <= failures) throw Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' })
    state.onWork = onWork
    return async () => { state.unlistened++ }
  }
  return { listen, state }
}

test('a subscription that fails is tried again, and the loop is woken once it listens', async () => {
  const { listen, state } = flakyListen(2)
  const waker = await wakeOnWork(listen, ['webhook_deliveries'])
  expect(state.calls).toBe(1)
  const started = performance.now()
  // Woken when the third attempt (after 100 + 200 ms) succeeds, not at the 10 s sleep's end.
  await waker.sleep(10_000)
  expect(performance.now() - started).toBeLessThan(2000)
  expect(state.calls).toBe(3)
  const sleeping = waker.sleep(10_000)
  state.onWork!('webhook_deliveries')
  await sleeping
  await waker.close()
  expect(state.unlistened).toBe(1)
})

test('closed before a retry succeeds: it stops trying and leaves nothing subscribed', async () => {
  const { listen, state } = flakyListen(1)
  const waker = await wakeOnWork(listen, ['events'])
  await waker.close()
  await Bun.sleep(400)
  expect(state.calls).toBe(1)
  expect(state.unlistened).toBe(0)
})
