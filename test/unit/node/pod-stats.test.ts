import {describe, expect, it} from 'vitest'

import type {CriClient} from '../../../src/lib/cri/client.js'
import {startPodStatsSampler} from '../../../src/lib/node/pod-stats.js'

const POD = {id: 'p'.repeat(64), metadata: {name: 'web', namespace: 'shop', uid: 'u', attempt: 0}, state: 'SANDBOX_READY', labels: {}}

/** A runtime whose pod-level stats carry no CPU or memory (CRI-O with cgroupfs), sampled twice 1 s apart. */
function crioLike(): {client: CriClient; calls: string[]} {
  const calls: string[] = []
  let sample = 0
  const cpu = (ns: number) => ({timestamp: String(1_700_000_000_000_000_000 + sample * 1e9), usageCoreNanoSeconds: {value: String(ns)}})
  const client = {
    deadlineFor: () => 1000,
    async runtime(method: string) {
      calls.push(method)
      switch (method) {
        case 'listPodSandbox':
          return {items: [POD]}
        case 'listPodSandboxStats':
          sample++
          return {stats: [{attributes: {id: POD.id}, linux: {cpu: undefined, memory: undefined}}]}
        case 'listContainerStats':
          return {
            stats: [
              {attributes: {id: 'c1'}, cpu: cpu(sample * 100_000_000), memory: {workingSetBytes: {value: '1000'}}},
              {attributes: {id: 'c2'}, cpu: cpu(sample * 50_000_000), memory: {workingSetBytes: {value: '24'}}},
            ],
          }
        case 'listContainers':
          return {
            containers: [
              {id: 'c1', podSandboxId: POD.id},
              {id: 'c2', podSandboxId: POD.id},
            ],
          }
        default:
          throw new Error(`unexpected ${method}`)
      }
    },
  }
  return {client: client as unknown as CriClient, calls}
}

describe('statsp on a runtime whose pod-level stats are empty (CRI-O with the cgroupfs driver)', () => {
  it("sums the pod's containers for CPU and memory, and says so in the row's source", async () => {
    const {client, calls} = crioLike()
    const sampler = await startPodStatsSampler(client, {})
    const [row] = await sampler.next(1)
    expect(row).toMatchObject({
      podName: 'web',
      memoryWorkingSetBytes: '1024',
      cpuUsageCoreNanoSeconds: String(2 * 150_000_000),
      cpuPercent: 15,
      source: 'ListContainerStats',
    })
    expect(calls.filter((method) => method === 'listPodSandboxStats')).toHaveLength(2)
  })
})
