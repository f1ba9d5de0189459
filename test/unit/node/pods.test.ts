/**
 * listPods reads ListContainers only for the container counts, and only when asked for them: the
 * table's CONTAINERS column. Without the count, every entry says 0/0 and no ListContainers is made.
 */
import {describe, expect, it} from 'vitest'

import type {CriClient} from '../../../src/lib/cri/client.js'
import {listPods} from '../../../src/lib/node/pods.js'

const sandboxes = [
  {id: 'a'.repeat(64), metadata: {name: 'old', namespace: 'shop', uid: 'u1', attempt: 0}, state: 'SANDBOX_READY', createdAt: '1000'},
  {id: 'b'.repeat(64), metadata: {name: 'new', namespace: 'shop', uid: 'u2', attempt: 0}, state: 'SANDBOX_NOTREADY', createdAt: '2000'},
]

function fakeClient(calls: string[]): CriClient {
  return {
    async runtime(method: string) {
      calls.push(method)
      return {items: sandboxes}
    },
    async listSummaries(method: string) {
      calls.push(`${method} (summaries)`)
      return {items: sandboxes}
    },
    async countContainersBySandbox() {
      calls.push('listContainers (counted)')
      return new Map([['a'.repeat(64), {matching: 1, total: 2}]])
    },
  } as unknown as CriClient
}

describe('listPods', () => {
  it("counts each pod's containers from one ListContainers by default, newest pod first", async () => {
    const calls: string[] = []
    const entries = await listPods(fakeClient(calls), {}, {summaries: true})
    expect(calls.sort()).toEqual(['listContainers (counted)', 'listPodSandbox (summaries)'])
    expect(entries.map((entry) => [entry.sandbox.metadata?.name, entry.containers])).toEqual([
      ['new', {running: 0, total: 0}],
      ['old', {running: 1, total: 2}],
    ])
  })

  it('makes no ListContainers when the counts are not wanted', async () => {
    const calls: string[] = []
    const entries = await listPods(fakeClient(calls), {namespace: 'shop'}, {countContainers: false})
    expect(calls).toEqual(['listPodSandbox'])
    expect(entries.map((entry) => entry.containers)).toEqual([
      {running: 0, total: 0},
      {running: 0, total: 0},
    ])
  })
})
