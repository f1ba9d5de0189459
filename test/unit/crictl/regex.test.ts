/**
 * crictl's --name/--namespace: unanchored Go regexps (RE2), where a pattern Go rejects matches
 * nothing. RE2 syntax is translated to JS; JS-only syntax matches nothing; RE2 syntax with no JS
 * form is refused with a one-line usage error naming the flag.
 */
import {describe, expect, it} from 'vitest'

import {UsageError} from '../../../src/lib/errors.js'
import {regexMatcher} from '../../../src/lib/crictl/regex.js'

const matches = (pattern: string, value: string) => regexMatcher(pattern, '--name')(value)

describe('crictl name filters (Go regexps)', () => {
  it('are unanchored: web matches web2 and my-web, as in crictl', () => {
    expect(matches('web', 'web2')).toBe(true)
    expect(matches('web', 'my-web')).toBe(true)
    expect(matches('^web$', 'web2')).toBe(false)
    expect(matches('', 'anything')).toBe(true)
    expect(regexMatcher(undefined, '--name')('x')).toBe(true)
  })

  it(String.raw`translate RE2-only syntax: leading flags, \A and \z, (?P<name>), \Q…\E, POSIX classes, \pL, octal, ASCII \s`, () => {
    expect(matches('(?i)WEB', 'web')).toBe(true)
    expect(matches(String.raw`\Aweb\z`, 'web')).toBe(true)
    expect(matches(String.raw`\Aweb\z`, 'web2')).toBe(false)
    expect(matches('(?P<app>we)b', 'web')).toBe(true)
    expect(matches('(?<app>we)b', 'web')).toBe(true)
    expect(matches(String.raw`\Qa.b\E`, 'a.b')).toBe(true)
    expect(matches(String.raw`\Qa.b\E`, 'axb')).toBe(false)
    expect(matches('^[[:alpha:]]+-[[:digit:]]$', 'web-1')).toBe(true)
    expect(matches(String.raw`^\pL+$`, 'wéb')).toBe(true)
    expect(matches(String.raw`\141`, 'a')).toBe(true)
    expect(matches(String.raw`a\sb`, 'a\u00A0b')).toBe(false)
    expect(matches(String.raw`a\sb`, 'a b')).toBe(true)
  })

  it('match nothing for what Go cannot compile: JS-only lookaround and backreferences, bad syntax', () => {
    expect(matches('web(?=2)', 'web2')).toBe(false)
    expect(matches('(?<!x)web', 'web')).toBe(false)
    expect(matches(String.raw`(w)\1`, 'ww')).toBe(false)
    expect(matches('(unclosed', '(unclosed')).toBe(false)
    expect(matches('[[:nope:]]', 'x')).toBe(false)
  })

  it('refuse RE2 syntax JS cannot express, naming the flag', () => {
    expect(() => regexMatcher('(?U)a+', '--namespace')).toThrow(UsageError)
    expect(() => regexMatcher('a(?i)b', '--name')).toThrow(
      '--name "a(?i)b": (?i) is Go regexp syntax podctl cannot translate; rewrite the pattern without it',
    )
    expect(() => regexMatcher('(?i:a)b', '--name')).toThrow(/\(\?i:/)
    expect(() => regexMatcher('[[:^alpha:]]', '--name')).toThrow(UsageError)
  })
})
