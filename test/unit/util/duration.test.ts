import {describe, expect, it} from 'vitest'

import {durationFlag} from '../../../src/lib/flags.js'
import {parseConfig} from '../../../src/lib/cri/config.js'
import {clampTimerMs, clampTimerSeconds, MAX_TIMER_MS, parseDuration} from '../../../src/lib/util/duration.js'

describe('clampTimerMs', () => {
  it('keeps delays setTimeout accepts and bounds the rest to 2^31-1 ms', () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1)
    expect(clampTimerMs(0)).toBe(0)
    expect(clampTimerMs(1500)).toBe(1500)
    expect(clampTimerMs(MAX_TIMER_MS)).toBe(MAX_TIMER_MS)
    expect(clampTimerMs(MAX_TIMER_MS + 1)).toBe(MAX_TIMER_MS)
    expect(clampTimerMs(597 * 3_600_000)).toBe(MAX_TIMER_MS)
    expect(clampTimerMs(Infinity)).toBe(MAX_TIMER_MS)
    expect(clampTimerMs(Number.NaN)).toBe(MAX_TIMER_MS)
    expect(clampTimerMs(-5)).toBe(0)
  })

  it('bounds seconds so that seconds * 1000 is still a valid delay', () => {
    expect(clampTimerSeconds(30)).toBe(30)
    expect(clampTimerSeconds(999_999_999_999)).toBe(2_147_483)
    expect(clampTimerSeconds(999_999_999_999) * 1000).toBeLessThanOrEqual(MAX_TIMER_MS)
  })
})

describe('duration flags and config timeouts are clamped where they are parsed', () => {
  const parse = (input: string) =>
    (durationFlag({}) as unknown as {parse(i: string, c: unknown, o: {name: string}): Promise<number>}).parse(input, {}, {name: 'timeout'})

  it('turns --timeout 99999999999999s and --connect-timeout 597h into the longest timer', async () => {
    expect(parseDuration('597h')).toBe(597 * 3_600_000)
    expect(await parse('597h')).toBe(MAX_TIMER_MS)
    expect(await parse('99999999999999s')).toBe(MAX_TIMER_MS)
    expect(await parse('9'.repeat(400))).toBe(MAX_TIMER_MS)
    expect(await parse('10s')).toBe(10_000)
  })

  it('clamps the crictl config timeout too', async () => {
    expect((await parseConfig('timeout: 99999999999\n', '/etc/crictl.yaml')).timeoutMs).toBe(MAX_TIMER_MS)
    expect((await parseConfig('timeout: 900h\n', '/etc/crictl.yaml')).timeoutMs).toBe(MAX_TIMER_MS)
    expect((await parseConfig('timeout: 5\n', '/etc/crictl.yaml')).timeoutMs).toBe(5000)
  })
})
