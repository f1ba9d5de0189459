import {describe, expect, it} from 'vitest'

import {fittedFileName} from '../../../src/lib/util/file-names.js'
import {cutToBytes, NAME_MAX} from '../../../src/lib/util/path-component.js'

/** A valid pod name of the most characters Kubernetes allows (a DNS subdomain of 253). */
const LONGEST = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`

describe('fittedFileName', () => {
  it('leaves a name that fits as it is: files written before stay where they are', () => {
    expect(fittedFileName('web_default', '.lock')).toBe('web_default.lock')
    expect(fittedFileName('x'.repeat(250), '.lock')).toBe(`${'x'.repeat(250)}.lock`)
  })

  it('cuts a name that does not fit and adds a digest of the whole: one file per name, within the limit', () => {
    const name = `${LONGEST}_${'n'.repeat(63)}`
    const fitted = fittedFileName(name, '.lock', 234)
    expect(Buffer.byteLength(fitted)).toBe(234)
    expect(fitted).toMatch(/^a{63}\.b{63}\.c{63}\.d+~[0-9a-f]{16}\.lock$/)
    expect(fittedFileName(`${LONGEST}_${'m'.repeat(63)}`, '.lock', 234)).not.toBe(fitted)
    expect(fittedFileName(name, '.lock', 234)).toBe(fitted)
    expect(Buffer.byteLength(fittedFileName(name))).toBeLessThanOrEqual(NAME_MAX)
  })
})

describe('cutToBytes', () => {
  it('never cuts a character in half', () => {
    expect(cutToBytes('ééé', 5)).toBe('éé')
    expect(cutToBytes('abc', 10)).toBe('abc')
  })
})
