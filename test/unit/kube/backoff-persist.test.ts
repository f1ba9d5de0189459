import {describe, expect, it} from 'vitest'

import {BackOff} from '../../../src/lib/kube/backoff.js'

describe('BackOff snapshot and restore (the crash back-off kept between sync runs)', () => {
  it('carries the ladder over: 10 s, then 20 s, doubling to 300 s', () => {
    let now = 0
    const first = new BackOff({initialMs: 10_000, maxMs: 300_000, now: () => now})
    expect(first.delaySince('k', 0)).toBe(0)
    first.next('k', 0)
    const second = new BackOff({initialMs: 10_000, maxMs: 300_000, now: () => now})
    second.restore(structuredClone(first.snapshot()))
    now = 5000
    expect(second.delaySince('k', 1000)).toBe(6000)
    now = 12_000
    expect(second.delaySince('k', 1000)).toBe(0)
    second.next('k', 1000)
    expect(second.window('k')).toBe(20_000)
    for (let i = 0; i < 10; i++) second.next('k', 1000)
    expect(second.window('k')).toBe(300_000)
  })

  it('forgets a key on reset (a container that ran 10 minutes) and skips malformed entries', () => {
    const backOff = new BackOff({initialMs: 10, maxMs: 300})
    backOff.next('k', 0)
    backOff.reset('k')
    expect(backOff.window('k')).toBe(0)
    backOff.restore({bad: {backoffMs: Number.NaN, lastUpdate: 1}} as never)
    expect(backOff.snapshot()).toEqual({})
  })
})
