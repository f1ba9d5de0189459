import {describe, expect, it} from 'vitest'

import * as api from '../../../src/generated/runtime/v1/api.js'
import type {CriClient} from '../../../src/lib/cri/client.js'
import {countGroups} from '../../../src/lib/cri/count-states.js'
import {columnListing} from '../../../src/lib/cri/decoders.js'
import {readSandboxColumns, SandboxSpan, sandboxText} from '../../../src/lib/cri/sandbox-columns.js'
import {decodeSandboxSummaries} from '../../../src/lib/cri/summaries.js'
import {POD_TABLE_HEADERS, podEntryRows, podTable, type PodTableOptions} from '../../../src/lib/node/pod-table.js'
import {type PodListFilters, selectPods} from '../../../src/lib/node/pods.js'
import {humanDuration} from '../../../src/lib/output/format.js'
import {renderSpanTable} from '../../../src/lib/output/span-table.js'
import {renderTableBytes} from '../../../src/lib/output/table.js'

const names = {sandbox: api.podSandboxStateFromJSON, container: api.containerStateFromJSON}
const NOW_MS = 1_764_590_400_000

let seed = 5
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]
const hex = (length: number) => Array.from({length}, () => pick([...'0123456789abcdef'])).join('')

function randomSandbox(plain: boolean): api.PodSandbox {
  const name = `web-${hex(4)}`
  return api.PodSandbox.fromPartial({
    id: pick([hex(64), `sha256:${hex(64)}`, `SHA:${hex(20)}`, hex(5), ':x']),
    metadata:
      random() < 0.9
        ? {name: plain ? name : `wéb-${name}`, uid: hex(8), namespace: pick(['shop', 'team-1', '']), attempt: pick([0, 2, 70])}
        : undefined,
    state: pick([0, 1, 5]) as never,
    // 1764590399000999999: a second before NOW_MS once divided towards zero, less than one if rounded.
    createdAt: pick(['1764590399000999999', '1764590000123456789', '1764590400000000000', '0', '-5', '999999']),
    labels: {'io.kubernetes.pod.name': name, app: 'web'},
    annotations: {'kubernetes.io/config.source': 'api'},
    runtimeHandler: pick(['', 'runc']),
  })
}

const options: PodTableOptions = {
  noTrunc: false,
  ready: 'Ready',
  notReady: 'NotReady',
  nowMs: NOW_MS,
  age: (ms) => `${humanDuration(ms)} ago`,
}

/** Sandboxes and containers for them (some pointing at no listed sandbox), as the runtime would answer. */
function node(plain: boolean, size: number): {sandboxes: Buffer; containers: Buffer} {
  const sandboxes = Array.from({length: size}, () => randomSandbox(plain || random() < 0.9))
  const containers = Array.from({length: size * 2}, () =>
    api.Container.fromPartial({id: hex(64), podSandboxId: random() < 0.9 ? pick(sandboxes).id : hex(64), state: pick([0, 1, 2]) as never}),
  )
  return {
    sandboxes: Buffer.from(api.ListPodSandboxResponse.encode({items: sandboxes}).finish()),
    containers: Buffer.from(api.ListContainersResponse.encode({containers}).finish()),
  }
}

function fakeClient(answers: {sandboxes: Buffer; containers: Buffer}): CriClient {
  return {
    listColumns: async () => columnListing(api, 'listPodSandbox', answers.sandboxes, []),
    countContainersBySandbox: async () => countGroups(answers.containers, 2, {field: 6, value: 1}),
  } as unknown as CriClient
}

function fromStrings(answers: {sandboxes: Buffer; containers: Buffer}, filters: PodListFilters, rowOptions: PodTableOptions): string {
  const counts = countGroups(answers.containers, 2, {field: 6, value: 1})
  const entries = selectPods(decodeSandboxSummaries(answers.sandboxes, names).items, counts, filters)
  return renderTableBytes(POD_TABLE_HEADERS, podEntryRows(entries, rowOptions)).toString()
}

describe("pods's table drawn from bytes", () => {
  it('reads each sandbox where the summaries decoder reads it', () => {
    const {sandboxes} = node(false, 200)
    const columns = readSandboxColumns(sandboxes)
    const decoded = decodeSandboxSummaries(sandboxes, names).items
    expect(columns.count).toBe(decoded.length)
    for (const [i, sandbox] of decoded.entries()) {
      expect(sandboxText(columns, i, SandboxSpan.id)).toBe(sandbox.id)
      expect(sandboxText(columns, i, SandboxSpan.name)).toBe(sandbox.metadata?.name ?? '')
      expect(sandboxText(columns, i, SandboxSpan.namespace)).toBe(sandbox.metadata?.namespace ?? '')
      expect(columns.attempts[i]).toBe(sandbox.metadata?.attempt ?? 0)
      expect(api.podSandboxStateFromJSON(columns.states[i])).toBe(sandbox.state)
      expect(BigInt.asIntN(64, (BigInt(columns.createdHigh[i]) << 32n) | BigInt(columns.createdLow[i])).toString()).toBe(sandbox.createdAt)
    }
  })

  it('is byte for byte the table drawn from decoded sandboxes, for every filter, with and without --no-trunc', async () => {
    const filterSets: PodListFilters[] = [
      {},
      {name: 'web-*'},
      {namespace: 'team-*'},
      {namespace: 'shop'},
      {id: 'a'},
      {last: 3},
      {latest: true},
    ]
    for (let round = 0; round < 40; round++) {
      const answers = node(true, 1 + Math.floor(random() * 40))
      for (const filters of filterSets) {
        for (const noTrunc of [false, true]) {
          const drawn = await podTable(fakeClient(answers), filters, {...options, noTrunc}, renderSpanTable)
          expect(drawn.table?.toString(), JSON.stringify(filters)).toBe(fromStrings(answers, filters, {...options, noTrunc}))
        }
      }
    }
  })

  it('hands back the entries when a cell is not plain ASCII, and decodes the sandboxes only when asked', async () => {
    const accented = api.PodSandbox.fromPartial({id: hex(64), metadata: {name: 'wéb', namespace: 'shop'}, state: 0 as never})
    const unicode = {...node(true, 3), sandboxes: Buffer.from(api.ListPodSandboxResponse.encode({items: [accented]}).finish())}
    const fallback = await podTable(fakeClient(unicode), {}, options, renderSpanTable)
    if (fallback.table !== undefined) throw new Error('expected entries')
    expect(fallback.entries.map((entry) => entry.sandbox.metadata?.name)).toEqual(['wéb'])

    const answers = node(true, 10)
    const drawn = await podTable(fakeClient(answers), {}, options, renderSpanTable)
    if (drawn.table === undefined) throw new Error('expected a table')
    const expected = selectPods(decodeSandboxSummaries(answers.sandboxes, names).items, new Map(), {})
    expect(drawn.count).toBe(10)
    expect(drawn.sandboxes().map((sandbox) => sandbox.id)).toEqual(expected.map((entry) => entry.sandbox.id))
  })
})
