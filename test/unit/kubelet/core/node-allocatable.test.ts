import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {hugePagesBytes, nodeAllocatable} from '../../../../src/lib/kubelet/core/node-allocatable.js'

const GI = 1024n ** 3n
const MI = 1024n ** 2n

describe('nodeAllocatable: what the kubelet reports with its default hard eviction thresholds', () => {
  it('is capacity less memory.available<100Mi (and the huge pages) and nodefs.available<10%; all CPUs', () => {
    const disk = 100n * GI
    expect(nodeAllocatable({cpuMilli: 4000n, memoryBytes: 8n * GI, hugePagesBytes: 0n, ephemeralStorageBytes: disk})).toEqual({
      cpuMilli: 4000n,
      memoryBytes: 8n * GI - 100n * MI,
      // 10% as the kubelet's float32 0.1 makes it: a few bytes more than a tenth.
      ephemeralStorageBytes: disk - BigInt(Math.trunc(Number(disk) * Math.fround(0.1))),
    })
    expect(
      disk - nodeAllocatable({cpuMilli: 0n, memoryBytes: 0n, hugePagesBytes: 0n, ephemeralStorageBytes: disk}).ephemeralStorageBytes,
    ).toBe(10_737_418_400n)
    expect(nodeAllocatable({cpuMilli: 1000n, memoryBytes: 4n * GI, hugePagesBytes: 2n * GI, ephemeralStorageBytes: 0n}).memoryBytes).toBe(
      2n * GI - 100n * MI,
    )
    expect(nodeAllocatable({cpuMilli: 1000n, memoryBytes: 50n * MI, hugePagesBytes: 0n, ephemeralStorageBytes: 0n}).memoryBytes).toBe(0n)
  })

  it('counts the huge pages of every size', () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-hugepages-'))
    for (const [size, count] of [
      ['2048kB', '512'],
      ['1048576kB', '1'],
    ]) {
      mkdirSync(join(root, `hugepages-${size}`))
      writeFileSync(join(root, `hugepages-${size}`, 'nr_hugepages'), `${count}\n`)
    }

    expect(hugePagesBytes(root)).toBe(2n * GI)
    expect(hugePagesBytes(join(root, 'none'))).toBe(0n)
  })
})
