import {describe, expect, it} from 'vitest'

import {AmbiguousError, NotFoundError} from '../../../src/lib/errors.js'
import {cpuPercent, selectContainers, summarizeStats} from '../../../src/lib/node/stats.js'
import type {Container, ContainerStats, CpuUsage, PodSandbox} from '../../../src/generated/runtime/v1/api.js'

const cpu = (timestamp: bigint, usage: bigint | undefined): CpuUsage => ({
  timestamp: String(timestamp),
  usageCoreNanoSeconds: usage === undefined ? undefined : {value: String(usage)},
  usageNanoCores: undefined,
  psi: undefined,
})

describe('cpuPercent', () => {
  it('is Δusage over Δtime, in percent of one core, two decimals', () => {
    expect(cpuPercent(cpu(1_000_000_000n, 0n), cpu(2_000_000_000n, 250_000_000n))).toBe(25)
    expect(cpuPercent(cpu(0n, 0n), cpu(3_000_000_000n, 1_000_000_000n))).toBe(33.33)
    expect(cpuPercent(cpu(0n, 0n), cpu(1_000_000_000n, 2_000_000_000n))).toBe(200) // two busy cores
  })

  it('is null without two usable samples', () => {
    expect(cpuPercent(undefined, cpu(1n, 1n))).toBeNull()
    expect(cpuPercent(cpu(1n, 1n), undefined)).toBeNull()
    expect(cpuPercent(cpu(1n, undefined), cpu(2n, 5n))).toBeNull()
    expect(cpuPercent(cpu(5n, 1n), cpu(5n, 9n))).toBeNull() // clock did not advance
    expect(cpuPercent(cpu(1n, 900n), cpu(2n, 5n))).toBeNull() // counter went back: restarted
  })
})

const pod = (id: string, name: string, namespace: string, createdAt = '1'): PodSandbox =>
  ({
    id,
    metadata: {name, namespace, uid: `uid-${id}`, attempt: 0},
    state: 'SANDBOX_READY',
    createdAt,
    labels: {},
    annotations: {},
    runtimeHandler: '',
  }) as PodSandbox

const container = (id: string, name: string, podSandboxId: string, state = 'CONTAINER_RUNNING', createdAt = '1'): Container =>
  ({
    id,
    podSandboxId,
    metadata: {name, attempt: 0},
    state,
    createdAt,
    labels: {},
    annotations: {},
    image: undefined,
    imageRef: '',
    imageId: '',
  }) as Container

const sandboxes = [pod('p1aaa', 'web', 'shop'), pod('p2bbb', 'db', 'shop'), pod('p3ccc', 'web', 'default')]
const containers = [
  container('c1aaa', 'app', 'p1aaa', 'CONTAINER_RUNNING', '30'),
  container('c1abb', 'sidecar', 'p1aaa', 'CONTAINER_EXITED', '20'),
  container('c2aaa', 'postgres', 'p2bbb', 'CONTAINER_RUNNING', '10'),
  container('c3aaa', 'app', 'p3ccc', 'CONTAINER_RUNNING', '40'),
]
const ids = (list: Container[]) => list.map((c) => c.id)

describe('selectContainers', () => {
  it('keeps running containers, newest first, unless --all', () => {
    expect(ids(selectContainers(containers, sandboxes, {}))).toEqual(['c3aaa', 'c1aaa', 'c2aaa'])
    expect(ids(selectContainers(containers, sandboxes, {all: true}))).toEqual(['c3aaa', 'c1aaa', 'c1abb', 'c2aaa'])
  })

  it('filters by pod name in a namespace, by namespace glob and by ID prefix', () => {
    expect(ids(selectContainers(containers, sandboxes, {pod: 'web', namespace: 'shop', all: true}))).toEqual(['c1aaa', 'c1abb'])
    expect(ids(selectContainers(containers, sandboxes, {pod: 'web'}))).toEqual(['c3aaa'])
    expect(ids(selectContainers(containers, sandboxes, {pod: 'p2'}))).toEqual(['c2aaa'])
    expect(ids(selectContainers(containers, sandboxes, {namespace: 'sh*'}))).toEqual(['c1aaa', 'c2aaa'])
    expect(ids(selectContainers(containers, sandboxes, {namespace: 'sho'}))).toEqual([])
    expect(ids(selectContainers(containers, sandboxes, {id: 'c1a', all: true}))).toEqual(['c1aaa', 'c1abb'])
  })

  it('resolves a CONTAINER argument strictly, whatever its state', () => {
    expect(ids(selectContainers(containers, sandboxes, {container: 'c1ab'}))).toEqual(['c1abb'])
    expect(() => selectContainers(containers, sandboxes, {container: 'c1a'})).toThrow(AmbiguousError)
    expect(() => selectContainers(containers, sandboxes, {container: 'zzz'})).toThrow(NotFoundError)
  })

  it('takes POD/CONTAINER as logs and exec do, the pod in --namespace (default "default")', () => {
    expect(ids(selectContainers(containers, sandboxes, {container: 'web/app'}))).toEqual(['c3aaa'])
    expect(ids(selectContainers(containers, sandboxes, {container: 'web/sidecar', namespace: 'shop'}))).toEqual(['c1abb'])
    expect(ids(selectContainers(containers, sandboxes, {container: 'web_shop/app'}))).toEqual(['c1aaa'])
    expect(() => selectContainers(containers, sandboxes, {container: 'db/postgres'})).toThrow(
      'pod "db" not found in namespace default; it exists in shop: add -n shop',
    )
  })

  it('fails on an unknown --pod', () => {
    expect(() => selectContainers(containers, sandboxes, {pod: 'nope'})).toThrow(NotFoundError)
  })

  it('refuses --pod with a glob --namespace, as ps does', () => {
    expect(() => selectContainers(containers, sandboxes, {pod: 'web', namespace: 'sh*'})).toThrow(expect.objectContaining({exitCode: 2}))
  })
})

const stats = (id: string, seconds: bigint, usage: bigint, memory?: string): ContainerStats =>
  ({
    attributes: {id, metadata: undefined, labels: {}, annotations: {}},
    cpu: cpu(seconds * 1_000_000_000n, usage),
    memory: memory === undefined ? undefined : {timestamp: String(seconds * 1_000_000_000n), workingSetBytes: {value: memory}},
    writableLayer: {timestamp: '0', fsId: undefined, usedBytes: {value: '4096'}, inodesUsed: {value: '7'}},
    swap: undefined,
    io: undefined,
  }) as ContainerStats

describe('summarizeStats', () => {
  it('joins names, both samples and the pod, with int64 fields as strings', () => {
    const first = [stats('c1aaa', 1_714_557_600n, 0n)]
    const second = [stats('c1aaa', 1_714_557_601n, 500_000_000n, '1048576')]
    const [row] = summarizeStats([containers[0]], sandboxes, first, second)
    expect(row).toEqual({
      containerId: 'c1aaa',
      name: 'app',
      podSandboxId: 'p1aaa',
      podName: 'web',
      namespace: 'shop',
      state: 'CONTAINER_RUNNING',
      cpuPercent: 50,
      cpuUsageCoreNanoSeconds: '500000000',
      memoryWorkingSetBytes: '1048576',
      writableLayerUsedBytes: '4096',
      writableLayerInodesUsed: '7',
      timestamp: '2024-05-01T10:00:01.000Z',
    })
  })

  it('shows nulls for a container without stats (not running, or started between samples)', () => {
    const [row] = summarizeStats([containers[1]], sandboxes, [], [])
    expect(row).toMatchObject({
      containerId: 'c1abb',
      cpuPercent: null,
      memoryWorkingSetBytes: null,
      writableLayerUsedBytes: null,
      timestamp: null,
    })
  })
})
