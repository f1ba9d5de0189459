import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'

import {describe, expect, it} from 'vitest'

import {STRING_WIDTH_PATCH, stringWidthFile} from '../../../scripts/bundle/string-width-patch.mjs'
import {ROOT} from '../../support/podctl.js'

const file = stringWidthFile(ROOT)
const original = createRequire(file)(file) as (text: unknown) => number

/** string-width's own source with the bundle's patch, evaluated as a CommonJS module beside the original. */
function patched(): (text: unknown) => number {
  const [find, replace] = STRING_WIDTH_PATCH
  const source = readFileSync(file, 'utf8')
  expect(source.split(find)).toHaveLength(2)
  const module = {exports: {} as unknown}
  // eslint-disable-next-line no-new-func -- evaluating the patched text is the point of the test
  new Function('module', 'exports', 'require', source.replace(find, replace))(module, module.exports, createRequire(file))
  return module.exports as (text: unknown) => number
}

/** A deterministic generator (a linear congruential one), so a failure names a string that fails again. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state / 4_294_967_296
  }
}

// Printable ASCII, the edges around it, escapes, combining marks, wide, emoji and keycap pieces.
const PIECES = [
  ' ',
  '~',
  'a',
  'Z',
  '0',
  '#',
  '*',
  '\u001B[31m',
  '\u001B[0m',
  '\u009B1m',
  '\u001F',
  '\u007F',
  '\u0080',
  '\u00A9',
  '\u0301',
  '\u20E3',
  '\uFE0F',
  '\u4E2D',
  '\uFF21',
  '\u{1F600}',
  '\u{1F1FA}\u{1F1F8}',
  '\t',
  '\n',
  'é',
  '\u200B',
]

describe("the bundle's string-width patch", () => {
  const fast = patched()

  it('gives what string-width gives for printable ASCII, by its length', () => {
    const next = random(37)
    for (let i = 0; i < 20_000; i++) {
      const text = Array.from({length: Math.floor(next() * 40)}, () => String.fromCodePoint(0x20 + Math.floor(next() * 95))).join('')
      expect(fast(text), JSON.stringify(text)).toBe(original(text))
      expect(fast(text)).toBe(text.length)
    }
  })

  it('gives what string-width gives for everything else, which still takes its own way', () => {
    const next = random(41)
    for (let i = 0; i < 20_000; i++) {
      const text = Array.from({length: 1 + Math.floor(next() * 12)}, () => PIECES[Math.floor(next() * PIECES.length)]).join('')
      expect(fast(text), JSON.stringify(text)).toBe(original(text))
    }

    for (const odd of ['', undefined, 42, '#\uFE0F\u20E3', '1\u20E3', '\u001B]8;;https://x\u0007link\u001B]8;;\u0007'])
      expect(fast(odd), JSON.stringify(odd)).toBe(original(odd))
  })
})
