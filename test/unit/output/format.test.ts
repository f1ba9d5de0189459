import {describe, expect, it} from 'vitest'

import {compareNanosDesc, humanAge, humanDuration, humanSize, nanosToIso, nanosToMs, truncateId} from '../../../src/lib/output/format.js'
import {renderTable} from '../../../src/lib/output/table.js'
import {toJson} from '../../../src/lib/output/serialize.js'

describe('IDs', () => {
  it('truncates to 13 characters after any algorithm prefix', () => {
    const id = 'a'.repeat(64)
    expect(truncateId(id)).toBe('aaaaaaaaaaaaa')
    expect(truncateId(`sha256:${'b'.repeat(64)}`)).toBe('bbbbbbbbbbbbb')
    expect(truncateId(id, true)).toBe(id)
  })

  it('drops only a prefix of lower-case letters and digits before the first colon', () => {
    expect(truncateId('sha512:0123456789abcdef')).toBe('0123456789abc')
    expect(truncateId('SHA256:0123456789abcdef')).toBe('SHA256:012345')
    expect(truncateId(':0123456789abcdef')).toBe(':0123456789ab')
    expect(truncateId('sha-256:0123456789abcdef')).toBe('sha-256:01234')
    expect(truncateId('a:b:0123456789abcdef')).toBe('b:0123456789a')
    expect(truncateId('short')).toBe('short')
    expect(truncateId('')).toBe('')
  })
})

describe('ages', () => {
  const now = Date.UTC(2026, 10, 30, 12, 0, 0)
  const ago = (ms: number) => (BigInt(now - ms) * 1_000_000n).toString()
  it.each([
    [200, 'Less than a second ago'],
    [1000, '1 second ago'],
    [42_000, '42 seconds ago'],
    [60_000, 'About a minute ago'],
    [3 * 60_000, '3 minutes ago'],
    [3_600_000, 'About an hour ago'],
    [5 * 3_600_000, '5 hours ago'],
    [3 * 86_400_000, '3 days ago'],
    [21 * 86_400_000, '3 weeks ago'],
    [90 * 86_400_000, '3 months ago'],
    [800 * 86_400_000, '2 years ago'],
  ])('%d ms → %s', (ms, text) => expect(humanAge(ago(ms), now)).toBe(text))

  it('keeps nanosecond timestamps exact beyond 2^53', () => {
    expect(compareNanosDesc('1764504000000000001', '1764504000000000000')).toBe(-1)
    expect(nanosToIso('1764504000123456789')).toBe('2025-11-30T12:00:00.123Z')
    expect(nanosToIso('0')).toBeNull()
    expect(humanDuration(59_999)).toBe('59 seconds')
  })

  it('orders timestamps as numbers, newest first, whatever their lengths and signs', () => {
    const nanos = ['1764504000000000001', '0', '999', '-5', '1764504000000000000', '-40', '1000', '999']
    const byBigInt = [...nanos].sort((a, b) => (BigInt(a) === BigInt(b) ? 0 : BigInt(a) > BigInt(b) ? -1 : 1))
    expect([...nanos].sort(compareNanosDesc)).toEqual(byBigInt)
    expect(compareNanosDesc('999', '999')).toBe(0)
  })

  it('turns nanoseconds into whole milliseconds, rounding toward zero, as BigInt division does', () => {
    for (const nanos of ['1764504000123456789', '1000000', '999999', '0', '-1500000', '12345678901234567890123']) {
      expect(nanosToMs(nanos), nanos).toBe(Number(BigInt(nanos) / 1_000_000n))
    }

    expect(nanosToMs(1_500_000)).toBe(1)
  })
})

describe('sizes', () => {
  it.each([
    [0, '0B'],
    [999, '999B'],
    [1000, '1kB'],
    [4_194_304, '4.19MB'],
    ['1536000000', '1.54GB'],
  ])('%s → %s', (bytes, text) => expect(humanSize(bytes)).toBe(text))
})

describe('tables and JSON', () => {
  it('aligns columns with three spaces and no trailing blanks', () => {
    expect(
      renderTable(
        ['POD ID', 'NAME'],
        [
          ['abc', 'web'],
          ['abcdef0123456', 'x'],
        ],
      ),
    ).toBe(['POD ID          NAME', 'abc             web', 'abcdef0123456   x'].join('\n'))
  })

  it('prints an empty table as its header', () => {
    expect(renderTable(['A', 'B'], [])).toBe('A   B')
  })

  it('turns absent messages into null and bytes into text', () => {
    expect(JSON.parse(toJson({a: undefined, b: new Uint8Array([104, 105]), c: [1n]}))).toEqual({a: null, b: 'hi', c: ['1']})
  })
})
