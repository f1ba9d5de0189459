import {describe, expect, it} from 'vitest'

import {compareNanosDesc, compareNanosWordsDesc, epochNanos, nanosToMs, nanosToRfc3339, nanosWordsToMs} from '../../../src/lib/util/time.js'

describe('nanosToRfc3339', () => {
  it('keeps nanosecond precision and drops trailing zeros like Go RFC3339Nano', () => {
    expect(nanosToRfc3339('1700000000123456789')).toBe('2023-11-14T22:13:20.123456789Z')
    expect(nanosToRfc3339('1700000000120000000')).toBe('2023-11-14T22:13:20.12Z')
    expect(nanosToRfc3339('1700000000000000000')).toBe('2023-11-14T22:13:20Z')
    expect(nanosToRfc3339(1_000_000_001)).toBe('1970-01-01T00:00:01.000000001Z')
  })

  it('turns the zero value ("never") into null', () => {
    expect(nanosToRfc3339('0')).toBeNull()
  })
})

describe('int64 nanoseconds as two 32-bit words', () => {
  const values = [
    '0',
    '5',
    '999999',
    '1000000',
    '1764590399000999999',
    '9223372036854775807',
    '-1',
    '-5',
    '-1000001',
    '-9223372036854775808',
  ]
  const words = (nanos: string) => {
    const value = BigInt.asUintN(64, BigInt(nanos))
    return [Number(BigInt.asIntN(32, value >> 32n)), Number(value & 0xff_ff_ff_ffn)] as const
  }

  it('turns into milliseconds as nanosToMs does, towards zero', () => {
    for (const nanos of values) expect(nanosWordsToMs(...words(nanos)), nanos).toBe(nanosToMs(nanos))
  })

  it('orders as compareNanosDesc does', () => {
    for (const a of values)
      for (const b of values) expect(Math.sign(compareNanosWordsDesc(...words(a), ...words(b))), `${a} ${b}`).toBe(compareNanosDesc(a, b))
  })
})

describe('epochNanos', () => {
  it('reads a time sent in seconds (CRI-O 1.26), milliseconds or microseconds by its magnitude', () => {
    expect(epochNanos('1700000000')).toBe('1700000000000000000')
    expect(epochNanos('1700000000123')).toBe('1700000000123000000')
    expect(epochNanos('1700000000123456')).toBe('1700000000123456000')
    expect(nanosToRfc3339(epochNanos('1700000000'))).toBe('2023-11-14T22:13:20Z')
  })

  it('leaves nanoseconds, "never" and small counters as they are', () => {
    for (const value of ['1700000000123456789', '0', '1', '42', '999999999']) expect(epochNanos(value)).toBe(value)
  })
})
