/** events against a runtime that streams GetContainerEvents (the lab's containerd 1.6 answers Unimplemented). */
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {podctl} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
let stop: () => Promise<void>

const event = (containerId: string, type: string, createdAt: string) => ({
  containerId,
  containerEventType: type,
  createdAt,
  podSandboxStatus: {id: 'pod1', metadata: {name: 'web', namespace: 'shop', uid: 'u', attempt: 0}, state: 'SANDBOX_READY'},
  containersStatuses: [],
})

beforeAll(async () => {
  const runtime = {
    version: versionHandler,
    getContainerEvents(call: {write(message: unknown): void; end(): void}) {
      // Two events from long ago, as containerd sends what it queued, then one that happens now.
      call.write(event('c1'.padEnd(64, '0'), 'CONTAINER_CREATED_EVENT', '1700000000000000000'))
      call.write(event('c1'.padEnd(64, '0'), 'CONTAINER_STARTED_EVENT', '1700000001000000000'))
      call.write(event('c2'.padEnd(64, '0'), 'CONTAINER_STOPPED_EVENT', String(BigInt(Date.now()) * 1_000_000n)))
      call.end()
    },
  }
  stop = await startFakeRuntime(socket, runtime as never)
})

afterAll(async () => {
  await stop()
})

describe('podctl events', () => {
  it('skips the events from before its start, says so once on stderr, and prints the new one', async () => {
    const result = await podctl(['-r', socket, 'events', '-o', 'go-template={{.containerEventType}} {{.containerId}}'], {env})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(`CONTAINER_STOPPED_EVENT ${'c2'.padEnd(64, '0')}\n`)
    expect(result.stderr).toBe('Skipping the events the runtime queued before this command started (--queued prints them)\n')
  })

  it('--queued prints one JSON document per event, as crictl events does, until the stream ends', async () => {
    const result = await podctl(['-r', socket, 'events', '--queued'], {env})
    expect(result.code, result.stderr).toBe(0)
    const documents = result.stdout
      .trimEnd()
      .split(/\n(?=\{)/)
      .map((text) => JSON.parse(text))
    expect(result.stderr).toBe('')
    expect(documents.map((d) => d.containerEventType)).toEqual([
      'CONTAINER_CREATED_EVENT',
      'CONTAINER_STARTED_EVENT',
      'CONTAINER_STOPPED_EVENT',
    ])
    expect(documents[0]).toMatchObject({containerId: 'c1'.padEnd(64, '0'), createdAt: '1700000000000000000'})
    expect(documents[0].podSandboxStatus.metadata).toMatchObject({name: 'web', namespace: 'shop'})
  })

  it('-o table prints a line per event; -o go-template and yaml work per event', async () => {
    const [table, template, yaml] = await Promise.all([
      podctl(['-r', socket, 'events', '--queued', '-o', 'table'], {env}),
      podctl(['-r', socket, 'event', '--queued', '-o', 'go-template={{.containerEventType}}'], {env}),
      podctl(['-r', socket, 'events', '--queued', '-o', 'yaml'], {env}),
    ])
    const lines = table.stdout.split('\n')
    expect(lines.slice(0, 2)).toEqual([
      '2023-11-14T22:13:20.000Z CREATED container=c100000000000 pod=web_shop',
      '2023-11-14T22:13:21.000Z STARTED container=c100000000000 pod=web_shop',
    ])
    expect(lines.slice(2)).toEqual([expect.stringMatching(/^\S+ STOPPED container=c200000000000 pod=web_shop$/), ''])
    expect(template.stdout).toBe('CONTAINER_CREATED_EVENT\nCONTAINER_STARTED_EVENT\nCONTAINER_STOPPED_EVENT\n')
    expect(yaml.stdout.split('\n---\n')).toHaveLength(3)
    expect(yaml.stdout).toContain('containerEventType: CONTAINER_STARTED_EVENT')
  })
})

describe('podctl events on runtimes that split their events or send none', () => {
  const crioDir = socketDir()
  const crioSocket = join(crioDir, 'crio.sock')
  let stopCrio: () => Promise<void>
  /** What the stream does: CRI-O 1.26 with enable_pod_events sends; without it, it ends at once. */
  let sends = true

  beforeAll(async () => {
    const runtime = {
      version: (_call: unknown, callback: (error: null, value: unknown) => void) =>
        callback(null, {version: '0.1.0', runtimeName: 'cri-o', runtimeVersion: '1.26.4', runtimeApiVersion: 'v1'}),
      getContainerEvents(call: {write(message: unknown): void; end(): void}) {
        if (sends) call.write(event('c3'.padEnd(64, '0'), 'CONTAINER_STARTED_EVENT', String(BigInt(Date.now() + 1000) * 1_000_000n)))
        call.end()
      },
    }
    stopCrio = await startFakeRuntime(crioSocket, runtime as never)
  })

  afterAll(async () => {
    await stopCrio()
  })

  it('says on stderr that listeners split the events of CRI-O before 1.28, and prints what it gets', async () => {
    sends = true
    const result = await podctl(['-r', crioSocket, 'events', '-o', 'go-template={{.containerEventType}}'], {env})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('CONTAINER_STARTED_EVENT\n')
    expect(result.stderr).toBe(
      'cri-o 1.26.4 gives each container event to one subscriber only (CRI-O 1.28 gives each to all): ' +
        'a kubelet, a podctl supervisor or another events command listening now takes some of the events, which this one misses ' +
        '(podctl supervisors leave such a runtime to its listeners and list it instead)\n',
    )
  })

  it('exits 6 naming enable_pod_events when the runtime ends the stream at once without an event', async () => {
    sends = false
    const result = await podctl(['-r', crioSocket, 'events'], {env})
    expect(result.code).toBe(6)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(
      'the runtime ended its container event stream at once, without an event ' +
        '(CRI-O sends container events only with enable_pod_events = true in its [crio.runtime] table)',
    )
  })
})
