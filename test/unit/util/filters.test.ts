import {describe, expect, it} from 'vitest'

import {exactNameHint, nameMatcher, parseLabelSelector, prefixGlobs, takeNewest} from '../../../src/lib/util/filters.js'
import {mapLimit, settleLimit} from '../../../src/lib/util/concurrency.js'

describe('name filters are exact unless globbed', () => {
  it('does not let web match web2 (crictl #1810)', () => {
    const match = nameMatcher('web')
    expect(match('web')).toBe(true)
    expect(match('web2')).toBe(false)
    expect(match('myweb')).toBe(false)
  })

  it('anchors * globs and escapes regex characters', () => {
    expect(nameMatcher('web-*')('web-1')).toBe(true)
    expect(nameMatcher('web-*')('a-web-1')).toBe(false)
    expect(nameMatcher('*.x')('a.x')).toBe(true)
    expect(nameMatcher('*.x')('abx')).toBe(false)
    expect(nameMatcher(undefined)('anything')).toBe(true)
  })

  it('matches globs part by part: stars in any number, overlapping parts, and no blow-up on long names', () => {
    expect(nameMatcher('a*b*c')('axxbyyc')).toBe(true)
    expect(nameMatcher('a*b*c')('axxcyyb')).toBe(false)
    expect(nameMatcher('ab*ba')('aba')).toBe(false)
    expect(nameMatcher('ab*ba')('abba')).toBe(true)
    expect(nameMatcher('*')('')).toBe(true)
    expect(nameMatcher('**x**')('yxy')).toBe(true)
    const started = Date.now()
    const name = 'a'.repeat(100_000)
    expect(nameMatcher('*a*a*a*a*a*a*a*a*a*b')(name)).toBe(false)
    expect(nameMatcher('a*a*a*a*a*a*a*a*a*a*')(name)).toBe(true)
    expect(Date.now() - started).toBeLessThan(200)
  })
})

describe('label selectors', () => {
  it('accepts repeated and comma-separated pairs', () => {
    expect(parseLabelSelector(['app=web', 'tier=a,zone=b'])).toEqual({app: 'web', tier: 'a', zone: 'b'})
    expect(parseLabelSelector(['empty='])).toEqual({empty: ''})
  })

  it('names the flag and the fix for a bad pair', () => {
    expect(() => parseLabelSelector(['app'])).toThrow('--label "app" must be KEY=VALUE, e.g. --label app=web')
    expect(() => parseLabelSelector(['=x'])).toThrow(/must be KEY=VALUE/)
  })
})

describe('newest N and concurrency', () => {
  it('--latest and --last keep the head of a newest-first list', () => {
    expect(takeNewest([3, 2, 1], {latest: true})).toEqual([3])
    expect(takeNewest([3, 2, 1], {last: 2})).toEqual([3, 2])
    expect(takeNewest([3, 2, 1], {})).toEqual([3, 2, 1])
  })

  it('mapLimit never exceeds its bound and keeps order', async () => {
    let inFlight = 0
    let peak = 0
    const out = await mapLimit([5, 1, 3, 2, 4], 2, async (n) => {
      inFlight++
      peak = Math.max(peak, inFlight)
      await new Promise((r) => {
        setTimeout(r, n * 3)
      })
      inFlight--
      return n * 10
    })
    expect(out).toEqual([50, 10, 30, 20, 40])
    expect(peak).toBe(2)
  })

  it('settleLimit reports every failure without stopping the rest', async () => {
    const out = await settleLimit([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('boom')
      return n
    })
    expect(out.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  })
})

describe('exactNameHint', () => {
  it('names the exact filters and the globs that would match names starting with them', () => {
    expect(exactNameHint({name: 'serv', namespace: undefined})).toBe(
      "--name matches whole names only; to match names that start with it, use --name 'serv*'",
    )
    expect(exactNameHint({name: 'serv', namespace: 'kube'})).toBe(
      "--name and --namespace match whole names only; to match names that start with it, use --name 'serv*' --namespace 'kube*'",
    )
    expect(exactNameHint({name: 'serv*', namespace: undefined})).toBeUndefined()
    expect(exactNameHint({name: undefined})).toBeUndefined()
  })
})

describe('prefixGlobs', () => {
  it('makes each exact filter the glob of names starting with it; globs and absent filters stay', () => {
    expect(prefixGlobs({name: 'serv', namespace: 'kube*', id: undefined})).toEqual({name: 'serv*', namespace: 'kube*', id: undefined})
  })
})
