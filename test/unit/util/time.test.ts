import {describe, expect, it} from 'vitest'

import {nanosToRfc3339} from '../../../src/lib/util/time.js'

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
