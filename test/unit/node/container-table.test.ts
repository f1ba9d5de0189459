import {BinaryWriter} from '@bufbuild/protobuf/wire'
import {describe, expect, it} from 'vitest'

import * as api from '../../../src/generated/runtime/v1/api.js'
import type {CriClient} from '../../../src/lib/cri/client.js'
import {has, readContainerColumns, Span, text} from '../../../src/lib/cri/container-columns.js'
import {containerListing} from '../../../src/lib/cri/decoders.js'
import {decodeContainerSummaries} from '../../../src/lib/cri/summaries.js'
import {containerTable, type EntryRowOptions, entryRows} from '../../../src/lib/node/container-table.js'
import {type ContainerListFilters, selectContainers} from '../../../src/lib/node/containers.js'
import {humanDuration} from '../../../src/lib/output/format.js'
import {renderSpanTable} from '../../../src/lib/output/span-table.js'
import {renderTableBytes} from '../../../src/lib/output/table.js'

const names = {sandbox: api.podSandboxStateFromJSON, container: api.containerStateFromJSON}
const NOW_MS = 1_764_590_400_000

let seed = 7
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]
const hex = (length: number) => Array.from({length}, () => pick([...'0123456789abcdef'])).join('')

const IMAGE_ID = `sha256:${'4'.repeat(64)}`
const images: api.Image[] = [api.Image.fromPartial({id: IMAGE_ID, repoTags: ['registry.example.com/web:1.2'], repoDigests: []})]

/** A container as a kubelet (or, now and then, something else) would leave it, with the awkward cases mixed in. */
function randomContainer(plain: boolean): api.Container {
  const pod = `web-${hex(5)}`
  const labels: Record<string, string> = {
    'io.kubernetes.pod.name': pod,
    'io.kubernetes.pod.namespace': pick(['shop', 'team-1', 'team-22']),
    'io.kubernetes.pod.uid': hex(8),
    'io.kubernetes.container.name': pick(['web', 'log', '']),
    other: pick(['a', '', 'io.kubernetes.pod.name']),
  }
  // 1764590399000999999: a second before NOW_MS once divided towards zero, less than one if rounded.
  const created = pick([
    '1764590399000999999',
    '1764590000123456789',
    '1764590399999999999',
    '1764590400000000000',
    '0',
    '-5',
    '999999',
    '1764000000000000001',
  ])
  const image = pick([
    {image: IMAGE_ID, userSpecifiedImage: 'registry.example.com/web:1.2'},
    {image: IMAGE_ID, userSpecifiedImage: ''},
    {image: 'busybox:1.36', userSpecifiedImage: ''},
    {image: `sha256:${'9'.repeat(64)}`, userSpecifiedImage: ''},
  ])
  return api.Container.fromPartial({
    id: pick([hex(64), `sha256:${hex(64)}`, `SHA:${hex(20)}`, hex(5), ':x']),
    podSandboxId: pick([hex(64), '', `abc:${hex(30)}`]),
    metadata: random() < 0.9 ? {name: pick(['web', 'log', 'side-car']), attempt: pick([0, 1, 12, 300])} : undefined,
    image: random() < 0.95 ? {...image, annotations: {a: 'b'}} : undefined,
    imageRef: pick([IMAGE_ID, '', 'sha256:abc']),
    imageId: pick(['', IMAGE_ID]),
    state: pick([0, 1, 2, 3, 9]) as never,
    createdAt: created,
    labels: plain ? labels : {...labels, 'io.kubernetes.pod.name': `wéb-${pod}`},
    annotations: {'io.kubernetes.container.hash': hex(8), 'kubernetes.io/config.source': 'api'},
  })
}

function encode(containers: api.Container[]): Buffer {
  return Buffer.from(api.ListContainersResponse.encode({containers}).finish())
}

/** A client answering ListContainers with `bytes`, ListImages with `images`, ListPodSandbox with no sandbox. */
function fakeClient(bytes: Buffer): CriClient {
  return {
    listContainerColumns: async (_request: unknown, labelKeys: string[]) => containerListing(api, bytes, labelKeys),
    image: async () => ({images}),
    listSummaries: async () => ({items: []}),
  } as unknown as CriClient
}

const options: EntryRowOptions = {noTrunc: false, paintState: (state) => state, nowMs: NOW_MS, age: (ms) => `${humanDuration(ms)} ago`}

/** The table as ps draws it from decoded containers (the string path). */
function fromStrings(bytes: Buffer, filters: ContainerListFilters, rowOptions: EntryRowOptions): Buffer {
  const entries = selectContainers(decodeContainerSummaries(bytes, names).containers, [], filters, images)
  const {headers, rows} = entryRows(entries, rowOptions)
  return renderTableBytes(headers, rows)
}

describe('container columns: ListContainers read without decoding', () => {
  it('finds every field the table reads where the summaries decoder reads it', () => {
    const containers = Array.from({length: 300}, () => randomContainer(random() < 0.8))
    const bytes = encode(containers)
    const columns = readContainerColumns(bytes, ['io.kubernetes.pod.name', 'io.kubernetes.pod.namespace', 'io.kubernetes.container.name'])
    const decoded = decodeContainerSummaries(bytes, names).containers
    expect(columns.count).toBe(decoded.length)
    for (const [i, container] of decoded.entries()) {
      expect(text(columns, i, Span.id)).toBe(container.id)
      expect(text(columns, i, Span.podSandboxId)).toBe(container.podSandboxId)
      expect(text(columns, i, Span.name)).toBe(container.metadata?.name ?? '')
      expect(columns.attempts[i]).toBe(container.metadata?.attempt ?? 0)
      expect(text(columns, i, Span.image)).toBe(container.image?.image ?? '')
      expect(text(columns, i, Span.userSpecifiedImage)).toBe(container.image?.userSpecifiedImage ?? '')
      expect(text(columns, i, Span.imageRef)).toBe(container.imageRef)
      expect(text(columns, i, Span.imageId)).toBe(container.imageId)
      expect(api.containerStateFromJSON(columns.states[i])).toBe(container.state)
      const created = BigInt.asIntN(64, (BigInt(columns.createdHigh[i]) << 32n) | BigInt(columns.createdLow[i]))
      expect(created.toString()).toBe(container.createdAt)
      expect(text(columns, i, Span.label0)).toBe(container.labels['io.kubernetes.pod.name'])
      expect(text(columns, i, Span.label1)).toBe(container.labels['io.kubernetes.pod.namespace'])
      expect(has(columns, i, Span.label2)).toBe(true)
      expect(text(columns, i, Span.label2)).toBe(container.labels['io.kubernetes.container.name'])
    }
  })

  it('reads what a kubelet never writes as the decoders do: long fields, odd labels, unknown fields, tiny containers', () => {
    const long = 'x'.repeat(300)
    // A labels entry with its value first, one with no value, one whose key has a long value, one repeated.
    const entry = (write: (writer: BinaryWriter) => void) => {
      const writer = new BinaryWriter()
      write(writer)
      return writer.finish()
    }

    const container = new BinaryWriter()
    container.uint32(10).string(`id-${long}`)
    container.uint32(66).bytes(entry((w) => w.uint32(18).string('first').uint32(10).string('io.kubernetes.pod.name')))
    container.uint32(66).bytes(entry((w) => w.uint32(10).string('io.kubernetes.pod.namespace')))
    container.uint32(66).bytes(entry((w) => w.uint32(10).string('io.kubernetes.container.name').uint32(18).string(long)))
    container.uint32(66).bytes(entry((w) => w.uint32(10).string('io.kubernetes.pod.name').uint32(18).string('second')))
    // Unknown fields of every wire type (tag = number << 3 | type), at the top and inside metadata and the image spec.
    container.uint32(99 << 3).uint64(2n ** 60n)
    container.uint32((99 << 3) | 1).fixed64(7n)
    container.uint32((99 << 3) | 5).fixed32(7)
    const metadata = (w: BinaryWriter) =>
      w
        .uint32((7 << 3) | 5)
        .fixed32(1)
        .uint32(16)
        .uint32(300)
        .uint32(10)
        .string('c')
        .uint32(8 << 3)
        .int64(-1n)
    container.uint32(26).bytes(entry(metadata))
    container.uint32(34).bytes(
      entry((w) =>
        w
          .uint32((9 << 3) | 2)
          .string(long)
          .uint32(146)
          .string(`u-${long}`)
          .uint32(10)
          .string('img'),
      ),
    )
    container.uint32(48).int32(-2)
    container.uint32(56).int64(-5n)
    const one = container.finish()
    // Far more containers than a kubelet's would take in that many bytes (each a few bytes long).
    const tiny = new BinaryWriter().uint32(10).string('t').finish()
    const message = new BinaryWriter()
    message.uint32(10).bytes(one)
    message.uint32(5 << 3).uint32(1)
    for (let i = 0; i < 200; i++) message.uint32(10).bytes(tiny)
    const bytes = Buffer.from(message.finish())
    const columns = readContainerColumns(bytes, ['io.kubernetes.pod.name', 'io.kubernetes.pod.namespace', 'io.kubernetes.container.name'])
    const decoded = api.ListContainersResponse.decode(bytes).containers
    expect(columns.count).toBe(201)
    expect(decoded).toHaveLength(201)
    const [first] = decoded
    expect(text(columns, 0, Span.id)).toBe(first.id)
    expect(text(columns, 0, Span.label0)).toBe('second')
    expect(first.labels['io.kubernetes.pod.name']).toBe('second')
    expect(has(columns, 0, Span.label1)).toBe(true)
    expect(text(columns, 0, Span.label1)).toBe('')
    expect(text(columns, 0, Span.label2)).toBe(long)
    expect([text(columns, 0, Span.name), columns.attempts[0]]).toEqual([first.metadata?.name, first.metadata?.attempt])
    expect([text(columns, 0, Span.image), text(columns, 0, Span.userSpecifiedImage)]).toEqual(['img', `u-${long}`])
    expect(columns.states[0]).toBe(-2)
    expect(BigInt.asIntN(64, (BigInt(columns.createdHigh[0]) << 32n) | BigInt(columns.createdLow[0]))).toBe(-5n)
    expect(text(columns, 200, Span.id)).toBe('t')
    expect(has(columns, 200, Span.podSandboxId)).toBe(false)
  })

  it('refuses every cut of a container short of its end, as the decoders do', () => {
    const bytes = encode([randomContainer(true)])
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(() => api.ListContainersResponse.decode(bytes.subarray(0, cut)), `decoder at ${cut}`).toThrow(RangeError)
      expect(() => readContainerColumns(bytes.subarray(0, cut)), `columns at ${cut}`).toThrow(RangeError)
    }
  })

  it('refuses a message cut short, as the decoders do', () => {
    const bytes = encode([randomContainer(true)])
    expect(() => readContainerColumns(bytes.subarray(0, -3))).toThrow(RangeError)
    expect(readContainerColumns(Buffer.alloc(0)).count).toBe(0)
  })
})

describe("ps's table drawn from bytes", () => {
  const filterSets: ContainerListFilters[] = [
    {all: true},
    {},
    {all: true, name: 'web'},
    {all: true, name: 'side*'},
    {all: true, namespace: 'team-*'},
    {all: true, namespace: 'shop'},
    {all: true, image: '*web*'},
    {all: true, image: IMAGE_ID},
    {all: true, id: 'a'},
    {last: 3},
    {latest: true},
    {state: 'exited'},
  ]

  it('is byte for byte the table drawn from decoded containers, for every filter, with and without --no-trunc', async () => {
    for (let round = 0; round < 40; round++) {
      const bytes = encode(Array.from({length: 1 + Math.floor(random() * 60)}, () => randomContainer(true)))
      for (const filters of filterSets) {
        for (const noTrunc of [false, true]) {
          const drawn = await containerTable(fakeClient(bytes), filters, {...options, noTrunc}, renderSpanTable)
          expect(drawn.table, JSON.stringify(filters)).toBeDefined()
          expect(drawn.table!.toString()).toBe(fromStrings(bytes, filters, {...options, noTrunc}).toString())
        }
      }
    }
  })

  it('hands back the entries when a cell is not plain ASCII, or a container does not name its pod', async () => {
    const unicode = encode([randomContainer(true), randomContainer(false)])
    const drawn = await containerTable(fakeClient(unicode), {all: true}, options, renderSpanTable)
    if (drawn.table !== undefined) throw new Error('expected entries')
    expect(drawn.entries.map((entry) => entry.podName)).toEqual(
      selectContainers(decodeContainerSummaries(unicode, names).containers, [], {all: true}, images).map((entry) => entry.podName),
    )

    const bare = api.Container.fromPartial({id: 'c1', metadata: {name: 'made-by-crictl'}, state: 1 as never})
    const unnamed = await containerTable(fakeClient(encode([randomContainer(true), bare])), {all: true}, options, renderSpanTable)
    expect(unnamed.table).toBeUndefined()
  })

  it('counts its rows and decodes the containers only when asked, in the table order', async () => {
    const containers = Array.from({length: 20}, () => randomContainer(true))
    const bytes = encode(containers)
    const drawn = await containerTable(fakeClient(bytes), {all: true}, options, renderSpanTable)
    if (drawn.table === undefined) throw new Error('expected a table')
    const expected = selectContainers(decodeContainerSummaries(bytes, names).containers, [], {all: true}, images)
    expect(drawn.count).toBe(expected.length)
    expect(drawn.containers().map((container) => container.id)).toEqual(expected.map((entry) => entry.container.id))
  })
})
