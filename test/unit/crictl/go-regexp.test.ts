/**
 * crictl's --name and --namespace are Go regexps: RE2 syntax and linear time (re2js), unanchored,
 * and a pattern Go rejects is crictl's error in Go's words.
 */
import {describe, expect, it} from 'vitest'

import {crictlRegex} from '../../../src/lib/crictl/go-regexp.js'

describe('crictl name filters (Go regexps through RE2)', () => {
  it('are unanchored, with RE2 syntax JavaScript lacks', async () => {
    expect((await crictlRegex('web'))('web2')).toBe(true)
    expect((await crictlRegex('^web$'))('web2')).toBe(false)
    expect((await crictlRegex(undefined))('x')).toBe(true)
    expect((await crictlRegex(String.raw`\Aweb\z`))('web')).toBe(true)
    expect((await crictlRegex('(?i)WEB'))('web')).toBe(true)
    expect((await crictlRegex('a(?i)b'))('aB')).toBe(true)
    expect((await crictlRegex('^[[:alpha:]]+-[[:digit:]]$'))('web-1')).toBe(true)
    expect((await crictlRegex(String.raw`\Qa.b\E`))('axb')).toBe(false)
  })

  it("refuse what Go refuses, in crictl's words", async () => {
    await expect(crictlRegex('(')).rejects.toThrow('invalid regular expression "(": error parsing regexp: missing closing ): `(`')
    await expect(crictlRegex('a(?=b)')).rejects.toThrow('error parsing regexp: invalid or unsupported Perl syntax: `(?=`')
    await expect(crictlRegex(String.raw`(w)\1`)).rejects.toThrow('invalid escape sequence')
  })

  it('answer in linear time: (a+)+$ against a 41-character name, and accept a 100 KB pattern', async () => {
    const started = Date.now()
    expect((await crictlRegex('(a+)+$'))(`${'a'.repeat(40)}!`)).toBe(false)
    expect((await crictlRegex('(a+)+$'))(`${'a'.repeat(40)}!`.repeat(1000))).toBe(false)
    expect(Date.now() - started).toBeLessThan(1000)
    const big = 'x'.repeat(100_000)
    expect((await crictlRegex(big))(big)).toBe(true)
  })
})
