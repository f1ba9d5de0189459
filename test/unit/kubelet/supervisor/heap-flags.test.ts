/**
 * The flag a supervisor sets keeps V8's new space at the size it has, in a fresh process (the test
 * runner's own heap has long grown): a burst of surviving young objects that grows the new space
 * of a plain process to tens of MiB leaves it at its start size with the flag.
 */
import {spawnSync} from 'node:child_process'

import {describe, expect, it} from 'vitest'

import {OLD_GENERATION_FLAG, YOUNG_GENERATION_FLAG} from '../../../../src/lib/kubelet/supervisor/heap-flags.js'

/** The new space's committed MiB after a burst of allocations, most of which survive a scavenge or two. */
function newSpaceAfterBurst(flag?: string): number {
  const script = `
    const v8 = require('node:v8')
    ${flag ? `v8.setFlagsFromString(${JSON.stringify(flag)})` : ''}
    let keep = []
    for (let i = 0; i < 1e6; i++) { keep.push({i, s: 'x' + i}); if (keep.length > 20000) keep = [] }
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')
    console.log(space.physical_space_size / 1048576)`
  const result = spawnSync(process.execPath, ['-e', script], {encoding: 'utf8'})
  expect(result.stderr).toBe('')
  return Number(result.stdout)
}

describe('the young generation flag', () => {
  it('keeps the new space at its start size where it would grow without the flag', () => {
    expect(newSpaceAfterBurst()).toBeGreaterThanOrEqual(8)
    expect(newSpaceAfterBurst(YOUNG_GENERATION_FLAG)).toBeLessThanOrEqual(2)
  })
})

/** The old space's committed MiB after objects kept for a while and then dropped, with churn beside them. */
function oldSpaceAfterChurn(flag?: string): number {
  const script = `
    const v8 = require('node:v8')
    ${flag ? `v8.setFlagsFromString(${JSON.stringify(flag)})` : ''}
    let keep = []
    let churn = []
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 20000; i++) keep.push({i, s: 'x' + i})
      if (keep.length > 200000) keep = keep.slice(100000)
      for (let j = 0; j < 50000; j++) { churn.push({j}); if (churn.length > 1000) churn = [] }
    }
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')
    console.log(space.physical_space_size / 1048576)`
  const result = spawnSync(process.execPath, ['-e', script], {encoding: 'utf8'})
  expect(result.stderr).toBe('')
  return Number(result.stdout)
}

describe('the old generation flag', () => {
  it('keeps the old space near what is live where it would grow to several times that', () => {
    const plain = oldSpaceAfterChurn()
    expect(oldSpaceAfterChurn(OLD_GENERATION_FLAG)).toBeLessThan(plain / 2)
  })
})
