import {describe, expect, it} from 'vitest'

import {logLine, rfc3339} from '../../../src/lib/crictl/log.js'
import {goQuote} from '../../../src/lib/util/go-quote.js'

const NOW = new Date('2026-12-02T01:29:25Z')

describe("logrus' text formatter lines, as crictl writes them on stderr", () => {
  it('quotes a message as Go %q does, and leaves plain words bare', () => {
    expect(logLine('fatal', 'flag provided but not defined: -invalid', {now: NOW})).toMatch(
      /^time="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)" level=fatal msg="flag provided but not defined: -invalid"\n$/,
    )
    expect(logLine('info', 'done', {now: NOW})).toMatch(/ level=info msg=done\n$/)
    expect(goQuote('say "hi"\n\ttab\u0007 é')).toBe(String.raw`"say \"hi\"\n\ttab\a é"`)
    expect(goQuote('\u0001\u007F')).toBe(String.raw`"\x01\x7f"`)
  })

  it('stamps RFC 3339 in the local zone (Z in UTC)', () => {
    expect(rfc3339(NOW)).toMatch(/^2026-12-02T\d\d:\d\d:25(Z|[+-]\d\d:\d\d)$/)
  })

  it('writes FATA[0000] in colour on a terminal, the message padded to 44 columns', () => {
    const line = logLine('fatal', 'ID cannot be empty', {terminal: true, now: new Date()})
    expect(line).toBe(`\u001B[31mFATA\u001B[0m[0000] ${'ID cannot be empty'.padEnd(44)} \n`)
    expect(logLine('info', 'No containers to remove', {terminal: true, now: new Date()})).toBe(
      `\u001B[36mINFO\u001B[0m[0000] ${'No containers to remove'.padEnd(44)} \n`,
    )
  })
})
