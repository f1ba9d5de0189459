/**
 * The flags a supervisor sets, each in a fresh process (the test runner's own heap has long grown):
 * a burst of surviving young objects that grows the new space of a plain process to tens of MiB
 * leaves it at its start size; an old space that grows to several times what is live stays near it.
 */
import {spawnSync} from 'node:child_process'

import {describe, expect, it} from 'vitest'

import {OLD_GENERATION_FLAG, YOUNG_GENERATION_FLAG} from '../../../../src/lib/kubelet/supervisor/heap-flags.js'

/** A space's committed MiB in a fresh process that sets `flag` (if any), then runs `workload`. */
function spaceAfter(space: 'new_space' | 'old_space', workload: string, flag?: string): number {
  const script = `
    const v8 = require('node:v8')
    ${flag ? `v8.setFlagsFromString(${JSON.stringify(flag)})` : ''}
    ${workload}
    console.log(v8.getHeapSpaceStatistics().find((s) => s.space_name === ${JSON.stringify(space)}).physical_space_size / 1048576)`
  // One GC thread: concurrent marking's timing (a loaded machine) otherwise moves when a full collection comes.
  const result = spawnSync(process.execPath, ['--single-threaded-gc', '-e', script], {encoding: 'utf8'})
  expect(result.stderr).toBe('')
  return Number(result.stdout)
}

/** A burst of allocations, most of which survive a scavenge or two. */
const BURST = `let keep = []
    for (let i = 0; i < 1e6; i++) { keep.push({i, s: 'x' + i}); if (keep.length > 20000) keep = [] }`

/** Objects kept for a while and then dropped, with churn beside them. */
const CHURN = `let keep = []
    let churn = []
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 20000; i++) keep.push({i, s: 'x' + i})
      if (keep.length > 200000) keep = keep.slice(100000)
      for (let j = 0; j < 50000; j++) { churn.push({j}); if (churn.length > 1000) churn = [] }
    }`

describe('the young generation flag', () => {
  it('keeps the new space at its start size where it would grow without the flag', () => {
    expect(spaceAfter('new_space', BURST)).toBeGreaterThanOrEqual(8)
    expect(spaceAfter('new_space', BURST, YOUNG_GENERATION_FLAG)).toBeLessThanOrEqual(2)
  })
})

describe('the old generation flag', () => {
  it('keeps the old space near what is live where it would grow to several times that', () => {
    const plain = spaceAfter('old_space', CHURN)
    expect(spaceAfter('old_space', CHURN, OLD_GENERATION_FLAG)).toBeLessThan(plain / 2)
  })
})
