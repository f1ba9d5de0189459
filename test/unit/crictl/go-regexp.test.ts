/**
 * crictl's --name and --namespace are Go regexps: RE2 syntax and linear time (re2js), unanchored,
 * and a pattern Go rejects is crictl's error in Go's words.
 */
import {describe, expect, it} from 'vitest'

import {crictlRegex} from '../../../src/lib/crictl/go-regexp.js'

describe('crictl name filters (Go regexps through RE2)', () => {
  it('are unanchored, with RE2 syntax JavaScript lacks', () => {
    expect(crictlRegex('web')('web2')).toBe(true)
    expect(crictlRegex('^web$')('web2')).toBe(false)
    expect(crictlRegex(undefined)('x')).toBe(true)
    expect(crictlRegex(String.raw`\Aweb\z`)('web')).toBe(true)
    expect(crictlRegex('(?i)WEB')('web')).toBe(true)
    expect(crictlRegex('a(?i)b')('aB')).toBe(true)
    expect(crictlRegex('^[[:alpha:]]+-[[:digit:]]$')('web-1')).toBe(true)
    expect(crictlRegex(String.raw`\Qa.b\E`)('axb')).toBe(false)
  })

  it("refuse what Go refuses, in crictl's words", () => {
    expect(() => crictlRegex('(')).toThrow('invalid regular expression "(": error parsing regexp: missing closing ): `(`')
    expect(() => crictlRegex('a(?=b)')).toThrow('error parsing regexp: invalid or unsupported Perl syntax: `(?=`')
    expect(() => crictlRegex(String.raw`(w)\1`)).toThrow('invalid escape sequence')
  })

  it('answer in linear time: (a+)+$ against a 41-character name, and accept a 100 KB pattern', () => {
    const started = Date.now()
    expect(crictlRegex('(a+)+$')(`${'a'.repeat(40)}!`)).toBe(false)
    expect(crictlRegex('(a+)+$')(`${'a'.repeat(40)}!`.repeat(1000))).toBe(false)
    expect(Date.now() - started).toBeLessThan(1000)
    const big = 'x'.repeat(100_000)
    expect(crictlRegex(big)(big)).toBe(true)
  })
})
