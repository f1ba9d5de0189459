/** CriClient.runtimeStream (GetContainerEvents) against in-process gRPC runtimes: the unary calls' conventions, for a stream. */
import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {CriClient} from '../../../src/lib/cri/client.js'
import {RuntimeUnreachableError, UnimplementedError} from '../../../src/lib/errors.js'
import {socketDir, startFakeRuntime, startSilentSocket, versionHandler} from '../../support/fake-runtime.js'

const dir = socketDir()
const paths = {
  events: join(dir, 'events.sock'),
  unimplemented: join(dir, 'unimplemented.sock'),
  broken: join(dir, 'broken.sock'),
  silent: join(dir, 'silent.sock'),
  missing: join(dir, 'missing.sock'),
}
const stops: Array<() => Promise<void>> = []
/** Streams of the `events` runtime still open, and whether each ended because the client cancelled it. */
const open = new Set<grpc.ServerWritableStream<unknown, unknown>>()
let cancelled = 0

const secretEvent = {
  containerId: 'c1'.padEnd(64, '0'),
  containerEventType: 'CONTAINER_STOPPED_EVENT',
  createdAt: '1700000000000000000',
  podSandboxStatus: {id: 'sb1', metadata: {name: 'web', namespace: 'shop', uid: 'u', attempt: 0}, annotations: {token: 's3cr3t'}},
}

beforeAll(async () => {
  stops.push(
    await startFakeRuntime(paths.events, {
      version: versionHandler,
      getContainerEvents: ((call: grpc.ServerWritableStream<unknown, unknown>) => {
        open.add(call)
        call.on('cancelled', () => {
          cancelled++
          open.delete(call)
        })
        call.write(secretEvent)
      }) as never,
    }),
    // No handler: grpc-js answers UNIMPLEMENTED, as containerd 1.6 does.
    await startFakeRuntime(paths.unimplemented, {version: versionHandler}),
    await startFakeRuntime(paths.broken, {
      getContainerEvents: ((call: grpc.ServerWritableStream<unknown, unknown>) => {
        call.write(secretEvent)
        call.emit('error', {code: grpc.status.UNAVAILABLE, details: 'runtime is shutting down'})
      }) as never,
    }),
    await startSilentSocket(paths.silent),
  )
})

afterAll(async () => {
  for (const call of open) call.end()
  await Promise.all(stops.map((stop) => stop()))
})

function client(path: string, debug?: (line: string) => void): CriClient {
  return new CriClient({runtimeEndpoint: `unix://${path}`, connectTimeoutMs: 300, debug})
}

describe('CriClient.runtimeStream', () => {
  it('delivers each message, says when the stream is open, and ends on abort (the runtime sees the cancel)', async () => {
    const lines: string[] = []
    const c = client(paths.events, (line) => lines.push(line))
    const controller = new AbortController()
    const received: unknown[] = []
    let opened = 0
    const done = c.runtimeStream('getContainerEvents', {}, (event) => received.push(event) === 1 && controller.abort(), {
      signal: controller.signal,
      onOpen: () => opened++,
    })
    await expect(done).resolves.toBeUndefined()
    expect(opened).toBe(1)
    expect(received).toEqual([
      expect.objectContaining({containerId: secretEvent.containerId, containerEventType: 'CONTAINER_STOPPED_EVENT'}),
    ])
    await expect.poll(() => cancelled).toBe(1)
    // --debug: the method and the status, never a body.
    expect(lines.filter((line) => line.includes('GetContainerEvents'))).toEqual([
      expect.stringMatching(/^RuntimeService\/GetContainerEvents [\d.]+ms CANCELLED$/),
    ])
    expect(lines.join('\n')).not.toContain('s3cr3t')
    c.close()
  })

  it('UNIMPLEMENTED (containerd 1.6) rejects with UnimplementedError', async () => {
    const lines: string[] = []
    const c = client(paths.unimplemented, (line) => lines.push(line))
    const failure = await c.runtimeStream('getContainerEvents', {}, () => {}).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(UnimplementedError)
    expect((failure as Error).message).toContain('GetContainerEvents')
    expect(lines).toContainEqual(expect.stringMatching(/^RuntimeService\/GetContainerEvents [\d.]+ms UNIMPLEMENTED$/))
    c.close()
  })

  it('a stream the runtime breaks rejects with the mapped error after the messages it sent', async () => {
    const c = client(paths.broken)
    const received: unknown[] = []
    const failure = await c.runtimeStream('getContainerEvents', {}, (event) => received.push(event)).catch((error: unknown) => error)
    expect(received).toHaveLength(1)
    expect(failure).toBeInstanceOf(RuntimeUnreachableError)
    expect((failure as Error).message).toContain('runtime is shutting down')
    c.close()
  })

  it('connecting is bounded by the connect timeout, a missing socket fails at once', async () => {
    const silent = client(paths.silent)
    const started = Date.now()
    await expect(silent.runtimeStream('getContainerEvents', {}, () => {})).rejects.toThrow(/did not accept a connection within 300ms/)
    expect(Date.now() - started).toBeLessThan(5000)
    silent.close()
    const missing = client(paths.missing)
    await expect(missing.runtimeStream('getContainerEvents', {}, () => {})).rejects.toBeInstanceOf(RuntimeUnreachableError)
    missing.close()
  })

  it('aborted while connecting: resolves without opening the stream', async () => {
    const c = client(paths.events)
    const controller = new AbortController()
    controller.abort()
    let opened = 0
    const before = open.size
    await expect(
      c.runtimeStream('getContainerEvents', {}, () => {}, {signal: controller.signal, onOpen: () => opened++}),
    ).resolves.toBeUndefined()
    expect(opened).toBe(0)
    expect(open.size).toBe(before)
    c.close()
  })
})
