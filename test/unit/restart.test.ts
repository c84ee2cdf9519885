import { describe, expect, test } from 'bun:test'
import { nextRestartDelay } from '../../server/lib/restart.ts'

describe('nextRestartDelay', () => {
  test('the first restart waits 200 ms', () => {
    expect(nextRestartDelay(undefined, 5)).toBe(200)
  })

  test('a part that keeps dying waits twice as long each time, up to 30 s', () => {
    const waits: number[] = []
    let wait: number | undefined
    for (let i = 0; i < 10; i++) waits.push((wait = nextRestartDelay(wait, 1_000)))
    expect(waits).toEqual([200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000])
  })

  test('after a run of more than a minute the wait starts over', () => {
    expect(nextRestartDelay(30_000, 60_001)).toBe(200)
    expect(nextRestartDelay(30_000, 60_000)).toBe(30_000)
  })
})
