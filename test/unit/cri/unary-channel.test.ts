import {
  constants,
  createServer,
  type Http2Server,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {VersionResponse} from '../../../src/generated/runtime/v1/api.js'
import {CriClient} from '../../../src/lib/cri/client.js'
import {
  DeadlineExceededError,
  ExitCode,
  InterruptedError,
  NotFoundError,
  RuntimeError,
  RuntimeUnreachableError,
  UnimplementedError,
} from '../../../src/lib/errors.js'
import {socketDir, startFakeRuntime, versionHandler} from '../../support/fake-runtime.js'

/**
 * The light unary transport (unary-channel.ts, unary-call.ts) against a bare node:http2 server that
 * answers exactly what each case needs on the wire, and against grpc-js's server for the round trip.
 */
const dir = socketDir()
const closers: Array<() => Promise<void>> = []
afterAll(async () => {
  await Promise.all(closers.map((close) => close()))
})

type Answer = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void

interface RawRuntime {
  path: string
  /** Every request's headers, and each stream's RST_STREAM code once it closed. */
  requests: IncomingHttpHeaders[]
  resets: number[]
  sessions: ServerHttp2Session[]
}

let serial = 0
async function startRaw(answer: Answer): Promise<RawRuntime> {
  const raw: RawRuntime = {path: join(dir, `raw-${++serial}.sock`), requests: [], resets: [], sessions: []}
  const server: Http2Server = createServer()
  server.on('session', (session) => raw.sessions.push(session))
  server.on('stream', (stream, headers) => {
    raw.requests.push(headers)
    stream.on('close', () => raw.resets.push(stream.rstCode))
    stream.on('error', () => {})
    answer(stream, headers)
  })
  await new Promise<void>((resolve) => {
    server.listen(raw.path, resolve)
  })
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const session of raw.sessions) session.destroy()
        server.close(() => resolve())
      }),
  )
  return raw
}

/** One gRPC message: flag byte, big-endian length, bytes. */
function frame(message: Buffer, compressed = 0): Buffer {
  const prefix = Buffer.alloc(5)
  prefix[0] = compressed
  prefix.writeUInt32BE(message.length, 1)
  return Buffer.concat([prefix, message])
}

const version = (runtimeVersion = '1.0') =>
  Buffer.from(VersionResponse.encode(VersionResponse.fromPartial({version: '0.1.0', runtimeName: 'raw', runtimeVersion})).finish())

/** Headers, the message in pieces of `piece` bytes (several DATA frames), then trailers. */
const OK = {'grpc-status': '0'}
function answerWith(message: Buffer, trailers: Record<string, string> = OK, piece = message.length): Answer {
  return (stream) => {
    stream.respond({':status': 200, 'content-type': 'application/grpc'}, {waitForTrailers: true})
    stream.on('wantTrailers', () => stream.sendTrailers(trailers))
    const bytes = frame(message)
    for (let at = 0; at < bytes.length; at += Math.max(1, piece)) stream.write(bytes.subarray(at, at + piece))
    stream.end()
  }
}

const client = (path: string, extra: Partial<ConstructorParameters<typeof CriClient>[0]> = {}) => {
  const c = new CriClient({runtimeEndpoint: `unix://${path}`, connectTimeoutMs: 1000, callTimeoutMs: 2000, ...extra})
  closers.push(async () => c.close())
  return c
}

describe('unary calls over node:http2', () => {
  it('sends one framed request with the gRPC headers and reads a response split over DATA frames', async () => {
    const raw = await startRaw(answerWith(version('x'.repeat(200_000)), {'grpc-status': '0'}, 7000))
    const lines: string[] = []
    const response = await client(raw.path, {debug: (line) => lines.push(line)}).runtime('version', {version: '0.1.0'})
    expect(response.runtimeName).toBe('raw')
    expect(response.runtimeVersion).toHaveLength(200_000)
    const [headers] = raw.requests
    expect(headers[':path']).toBe('/runtime.v1.RuntimeService/Version')
    expect(headers[':authority']).toBe('localhost')
    expect(headers['content-type']).toBe('application/grpc')
    expect(headers.te).toBe('trailers')
    // The deadline travels with the call (2 s here), in milliseconds.
    expect(headers['grpc-timeout']).toMatch(/^(\d+)m$/)
    expect(Number(headers['grpc-timeout']!.toString().slice(0, -1))).toBeLessThanOrEqual(2000)
    expect(lines.some((line) => /^RuntimeService\/Version \d+\.\dms OK$/.test(line))).toBe(true)
    expect(lines.some((line) => /^connect unix:\/\/.*raw-\d+\.sock \d+\.\dms OK$/.test(line))).toBe(true)
  })

  it('asks for the 16 MiB flow-control window that keeps big listings from stalling', async () => {
    const raw = await startRaw(answerWith(version()))
    await client(raw.path).runtime('version', {})
    expect(raw.sessions[0].remoteSettings.initialWindowSize).toBe(16 * 1024 * 1024)
    expect(raw.sessions[0].state.remoteWindowSize).toBeGreaterThanOrEqual(16 * 1024 * 1024 - 100)
  })

  it('reads the status and the percent-decoded message from trailers', async () => {
    const raw = await startRaw(
      answerWith(Buffer.alloc(0), {'grpc-status': '5', 'grpc-message': 'container%20%22abc%22%20not%20found%20%E2%9C%93'}),
    )
    const failure = client(raw.path).runtime('containerStatus', {containerId: 'abc'})
    await expect(failure).rejects.toBeInstanceOf(NotFoundError)
    await expect(failure).rejects.toThrow('ContainerStatus: container "abc" not found ✓')
  })

  it('reads the status from the headers of a Trailers-Only response', async () => {
    const raw = await startRaw((stream) =>
      stream.respond(
        {':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12', 'grpc-message': 'unknown%20method'},
        {endStream: true},
      ),
    )
    const lines: string[] = []
    await expect(client(raw.path, {debug: (line) => lines.push(line)}).runtime('status', {})).rejects.toBeInstanceOf(UnimplementedError)
    expect(lines.some((line) => /^RuntimeService\/Status \d+\.\dms UNIMPLEMENTED$/.test(line))).toBe(true)
  })

  it('maps a non-200 HTTP status as gRPC specifies: 404 UNIMPLEMENTED, 503 UNAVAILABLE', async () => {
    const notFound = await startRaw((stream) => stream.respond({':status': 404}, {endStream: true}))
    await expect(client(notFound.path).runtime('version', {})).rejects.toBeInstanceOf(UnimplementedError)
    const unavailable = await startRaw((stream) => stream.respond({':status': 503}, {endStream: true}))
    const failure = client(unavailable.path).runtime('version', {})
    await expect(failure).rejects.toBeInstanceOf(RuntimeUnreachableError)
    await expect(failure).rejects.toThrow('is unavailable (Received HTTP status code 503)')
  })

  it('fails by its own deadline when the runtime never answers, and cancels the stream', async () => {
    const raw = await startRaw(() => {})
    const lines: string[] = []
    const failure = client(raw.path, {debug: (line) => lines.push(line)}).runtime('listPodSandbox', {}, {timeoutMs: 300})
    await expect(failure).rejects.toBeInstanceOf(DeadlineExceededError)
    await expect(failure).rejects.toThrow('ListPodSandbox got no answer from')
    expect(raw.requests[0]['grpc-timeout']).toMatch(/^(300|29\d)m$/)
    await expect.poll(() => raw.resets).toEqual([constants.NGHTTP2_CANCEL])
    expect(lines.some((line) => line.endsWith(' DEADLINE_EXCEEDED'))).toBe(true)
  })

  it('an abort cancels the call (CANCELLED, exit as interrupted) and the runtime sees RST_STREAM CANCEL', async () => {
    const raw = await startRaw(() => {})
    const abort = new AbortController()
    const failure = client(raw.path).runtime('listPodSandbox', {}, {signal: abort.signal})
    await expect.poll(() => raw.requests.length).toBe(1)
    abort.abort()
    await expect(failure).rejects.toBeInstanceOf(InterruptedError)
    await expect(failure).rejects.toMatchObject({exitCode: ExitCode.INTERRUPTED, grpc: {code: 1}})
    await expect.poll(() => raw.resets).toEqual([constants.NGHTTP2_CANCEL])
  })

  it('refuses a response over 64 MiB before buffering it (RESOURCE_EXHAUSTED)', async () => {
    const raw = await startRaw((stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc'})
      const prefix = Buffer.alloc(5)
      prefix.writeUInt32BE(64 * 1024 * 1024 + 1, 1)
      stream.write(prefix)
    })
    const failure = client(raw.path).runtime('listContainers', {})
    await expect(failure).rejects.toBeInstanceOf(RuntimeError)
    await expect(failure).rejects.toMatchObject({grpc: {code: 8}})
    await expect(failure).rejects.toThrow(`Received message larger than max (${64 * 1024 * 1024 + 1} vs. ${64 * 1024 * 1024})`)
    await expect.poll(() => raw.resets).toEqual([constants.NGHTTP2_CANCEL])
  })

  it('a compressed message without a negotiated encoding is INTERNAL', async () => {
    const raw = await startRaw((stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc'}, {waitForTrailers: true})
      stream.on('wantTrailers', () => stream.sendTrailers({'grpc-status': '0'}))
      stream.end(frame(version(), 1))
    })
    await expect(client(raw.path).runtime('version', {})).rejects.toMatchObject({grpc: {code: 13}, exitCode: ExitCode.RUNTIME})
  })

  it('a stream reset mid-call fails as grpc-js mapped it; a dropped connection is UNAVAILABLE', async () => {
    const refused = await startRaw((stream) => stream.close(constants.NGHTTP2_REFUSED_STREAM))
    await expect(client(refused.path).runtime('version', {})).rejects.toBeInstanceOf(RuntimeUnreachableError)
    const internal = await startRaw((stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc'})
      stream.close(constants.NGHTTP2_INTERNAL_ERROR)
    })
    await expect(client(internal.path).runtime('version', {})).rejects.toMatchObject({grpc: {code: 13}, exitCode: ExitCode.RUNTIME})
    const dropped = await startRaw((stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc'})
      stream.session?.destroy()
    })
    const failure = client(dropped.path).runtime('version', {})
    await expect(failure).rejects.toBeInstanceOf(RuntimeUnreachableError)
    await expect(failure).rejects.toThrow('is unavailable (Connection dropped)')
  })

  it('a runtime that restarts between calls is reached again on a new connection', async () => {
    const path = join(dir, 'restarting.sock')
    const stop = await startFakeRuntime(path, {version: versionHandler})
    const c = client(path)
    await expect(c.runtime('version', {})).resolves.toMatchObject({runtimeName: 'fake'})
    await stop()
    await expect(c.runtime('version', {})).rejects.toBeInstanceOf(RuntimeUnreachableError)
    closers.push(await startFakeRuntime(path, {version: versionHandler}))
    await expect(c.runtime('version', {})).resolves.toMatchObject({runtimeName: 'fake'})
  })

  it('a session the runtime ends (GOAWAY) is forgotten: the next call opens a new one', async () => {
    const raw = await startRaw(answerWith(version()))
    const c = client(raw.path)
    await c.runtime('version', {})
    raw.sessions[0].close()
    await expect.poll(() => raw.sessions[0].closed && raw.sessions[0].destroyed).toBe(true)
    await expect(c.runtime('version', {})).resolves.toMatchObject({runtimeName: 'raw'})
    expect(raw.sessions).toHaveLength(2)
  })
})
