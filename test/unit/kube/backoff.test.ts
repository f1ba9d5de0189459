import {describe, expect, it, test} from 'vitest'

import {
  BackOff,
  CRASH_BACKOFF_INITIAL_MS,
  CRASH_BACKOFF_MAX_MS,
  IMAGE_BACKOFF_INITIAL_MS,
  IMAGE_BACKOFF_MAX_MS,
} from '../../../src/lib/kube/backoff.js'

describe('BackOff (client-go flowcontrol, as the kubelet configures it for images)', () => {
  test('the ladder is 10s, 20s, 40s, 80s, 160s, then capped at 300s', () => {
    let now = 0
    const backOff = new BackOff({initialMs: IMAGE_BACKOFF_INITIAL_MS, maxMs: IMAGE_BACKOFF_MAX_MS, now: () => now})
    const windows: number[] = []
    for (let i = 0; i < 8; i++) {
      windows.push(backOff.next('uid_busybox'))
      now += 1000
    }

    expect(windows).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000])
  })

  test('isInBackOff holds for the window after the last failure, then clears', () => {
    let now = 1_000_000
    const backOff = new BackOff({initialMs: 10_000, maxMs: 300_000, now: () => now})
    expect(backOff.isInBackOff('k')).toBe(false)
    backOff.next('k')
    now += 9999
    expect(backOff.isInBackOff('k')).toBe(true)
    expect(backOff.remaining('k')).toBe(1)
    now += 1
    expect(backOff.isInBackOff('k')).toBe(false)
    expect(backOff.remaining('k')).toBe(0)
    expect(backOff.peekNext('k')).toBe(20_000)
  })

  test('keys are independent (pod UID + image), and an entry idle for 2 × max starts over', () => {
    let now = 0
    const backOff = new BackOff({initialMs: 10_000, maxMs: 300_000, now: () => now})
    backOff.next('pod-a_busybox')
    backOff.next('pod-a_busybox')
    expect(backOff.next('pod-b_busybox')).toBe(10_000)
    now += 600_001
    expect(backOff.next('pod-a_busybox')).toBe(10_000)
  })

  test('gc drops only expired entries', () => {
    let now = 0
    const backOff = new BackOff({initialMs: 10, maxMs: 100, now: () => now})
    backOff.next('old')
    now = 150
    backOff.next('fresh')
    now = 201
    backOff.gc()
    expect(backOff.peekNext('old')).toBe(10)
    expect(backOff.peekNext('fresh')).toBe(20)
  })
})

describe('BackOff.delaySince (crash-loop back-off from the finish time)', () => {
  it('restarts at once the first time, then waits 10 s, 20 s ... capped at 300 s', () => {
    const backOff = new BackOff({initialMs: CRASH_BACKOFF_INITIAL_MS, maxMs: CRASH_BACKOFF_MAX_MS})
    const key = 'web_shop_uid_app_hash'
    let t = 1_000_000
    expect(backOff.delaySince(key, t, t)).toBe(0)
    expect(backOff.next(key, t)).toBe(10_000)
    t += 1000
    expect(backOff.delaySince(key, t, t)).toBe(10_000)
    expect(backOff.delaySince(key, t, t + 4000)).toBe(6000)
    expect(backOff.next(key, t)).toBe(20_000)
    for (const expected of [40_000, 80_000, 160_000, 300_000, 300_000]) expect(backOff.next(key, (t += 1000))).toBe(expected)
    // Untouched for more than 2 × max: the ladder starts over.
    expect(backOff.delaySince(key, t + 600_001, t + 600_001)).toBe(0)
    expect(backOff.next(key, t + 600_001)).toBe(10_000)
  })
})
