import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {COMPARE_IDS, PATCHES} from '../../../scripts/bundle/oclif-patches.mjs'

// eslint-disable-next-line no-new-func -- the test evaluates the exact source text the bundle patch injects
const compareIds = new Function(`${COMPARE_IDS}\nreturn __podctlCompareIds`)() as (a: string, b: string) => number
const oclifLib = join(dirname(createRequire(import.meta.url).resolve('@oclif/core/package.json')), 'lib')

describe("the bundle's oclif patches", () => {
  it('each find the exact text they replace, once, in the installed @oclif/core', () => {
    for (const [file, patches] of Object.entries(PATCHES)) {
      const source = readFileSync(join(oclifLib, file), 'utf8')
      for (const [find] of patches) expect(source.split(find).length - 1, `${file}: ${find}`).toBe(1)
    }
  })

  it('sort command ids exactly as localeCompare does, without ICU, for the characters ids are made of', () => {
    const alphabet = '_-:0123456789abcdefghijklmnopqrstuvwxyz'
    let seed = 12_345
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
    const word = () => Array.from({length: 1 + Math.floor(random() * 6)}, () => alphabet[Math.floor(random() * alphabet.length)]).join('')
    for (let i = 0; i < 20_000; i++) {
      const a = word()
      const b = random() < 0.3 ? a + word() : word()
      expect(compareIds(a, b), `${a} vs ${b}`).toBe(Math.sign(a.localeCompare(b)))
    }

    const ids = ['status', 'pods', 'run', 'images:list', 'images', 'image-rm', 'ps', 'x_y', 'p2', 'p:2']
    expect([...ids].sort(compareIds)).toEqual([...ids].sort((a, b) => a.localeCompare(b)))
  })

  it('leave any other id to localeCompare', () => {
    expect(compareIds('Pods', 'pods')).toBe(Math.sign('Pods'.localeCompare('pods')))
    expect(compareIds('é', 'f')).toBe(Math.sign('é'.localeCompare('f')))
  })
})
