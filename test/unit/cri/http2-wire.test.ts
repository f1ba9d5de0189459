import {createHash} from 'node:crypto'
import {createServer as createHttp2Server, type Http2Server, type ServerHttp2Stream, type Settings} from 'node:http2'
import {createServer as createNetServer, type Socket} from 'node:net'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {Status} from '../../../src/lib/cri/grpc-status.js'
import {
  CLIENT_PREFACE,
  encodeFrame,
  ErrorCode,
  Flag,
  type Frame,
  FrameReader,
  FrameType,
  settingsFrame,
} from '../../../src/lib/cri/http2/frames.js'
import {encodeHeaders, type HeaderField} from '../../../src/lib/cri/http2/hpack.js'
import {UnaryChannel} from '../../../src/lib/cri/unary-channel.js'
import {socketDir} from '../../support/fake-runtime.js'

/**
 * The HTTP/2 connection under unary calls (src/lib/cri/http2/) on the wire: against node:http2
 * servers for flow control, concurrency, PING and GOAWAY, and against a raw socket server that
 * writes exactly the frames a case needs (CONTINUATION, padding, malformed frames).
 */
const dir = socketDir()
const closers: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const close of closers) await close()
})

const MiB = 1024 * 1024
let serial = 0
const nextPath = () => join(dir, `wire-${++serial}.sock`)

function channel(socketPath: string, connectTimeoutMs = 2000): {channel: UnaryChannel; gone: () => boolean} {
  let gone = false
  const opened = new UnaryChannel({socketPath, connectTimeoutMs, windowBytes: 16 * MiB, onGone: () => (gone = true)})
  closers.push(() => opened.close())
  return {channel: opened, gone: () => gone}
}

const call = (target: UnaryChannel, message = Buffer.from('ping'), timeoutMs = 5000) =>
  target.call({path: '/runtime.v1.RuntimeService/Version', message, timeoutMs, maxMessageBytes: 64 * MiB})

/** One gRPC message: flag byte, big-endian length, bytes. */
function grpcFrame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(5)
  prefix.writeUInt32BE(message.length, 1)
  return Buffer.concat([prefix, message])
}

async function http2Server(
  settings: Settings,
  onStream: (stream: ServerHttp2Stream) => void,
): Promise<{path: string; server: Http2Server}> {
  const path = nextPath()
  const server = createHttp2Server({settings})
  const sessions = new Set<import('node:http2').ServerHttp2Session>()
  server.on('session', (session) => sessions.add(session))
  server.on('stream', (stream) => {
    stream.on('error', () => {})
    onStream(stream)
  })
  await new Promise<void>((resolve) => {
    server.listen(path, resolve)
  })
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy()
        server.close(() => resolve())
      }),
  )
  return {path, server}
}

/** Answers each call with `message` in one gRPC frame, then grpc-status 0. */
function answer(stream: ServerHttp2Stream, message: Buffer): void {
  stream.respond({':status': 200, 'content-type': 'application/grpc'}, {waitForTrailers: true})
  stream.on('wantTrailers', () => stream.sendTrailers({'grpc-status': '0'}))
  stream.end(grpcFrame(message))
}

/** The request body a node:http2 server stream received, without its gRPC prefix. */
async function requestBody(stream: ServerHttp2Stream): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).subarray(5)
}

describe('flow control', () => {
  it('reads answers bigger than 64 KiB and bigger than the 16 MiB windows, up to the 64 MiB cap', async () => {
    const sizes = [200 * 1024, 20 * MiB, 64 * MiB]
    const {path} = await http2Server({}, (stream) => {
      void requestBody(stream).then((body) => answer(stream, Buffer.alloc(Number(body.toString()), body.length % 251)))
    })
    const {channel: target} = channel(path)
    for (const size of sizes) {
      const response = await call(target, Buffer.from(String(size)), 60_000)
      expect(response.length).toBe(size)
      expect(response.at(-1)).toBe(String(size).length % 251)
    }
  }, 120_000)

  it('sends a request body bigger than the peer window in frames the peer allows', async () => {
    const body = Buffer.from(Array.from({length: 3 * MiB}, (_, index) => index % 253))
    const seen: string[] = []
    const {path} = await http2Server({initialWindowSize: 1000}, (stream) => {
      void requestBody(stream).then((received) => {
        seen.push(createHash('sha256').update(received).digest('hex'))
        answer(stream, Buffer.from('ok'))
      })
    })
    const response = await call(channel(path).channel, body, 30_000)
    expect(response.toString()).toBe('ok')
    expect(seen).toEqual([createHash('sha256').update(body).digest('hex')])
  }, 60_000)
})

describe('the peer settings and control frames', () => {
  it('queues calls beyond MAX_CONCURRENT_STREAMS=1: three calls, one stream at a time, all answered', async () => {
    let open = 0
    let most = 0
    const {path} = await http2Server({maxConcurrentStreams: 1}, (stream) => {
      open++
      most = Math.max(most, open)
      stream.on('close', () => open--)
      setTimeout(() => answer(stream, Buffer.from(`answer ${stream.id}`)), 50)
    })
    const {channel: target} = channel(path)
    const answers = await Promise.all([call(target), call(target), call(target)])
    expect(answers.map(String)).toEqual(['answer 1', 'answer 3', 'answer 5'])
    expect(most).toBe(1)
  })

  it('answers PING with a PING ACK of the same payload', async () => {
    const pinged: Buffer[] = []
    const {path, server} = await http2Server({}, (stream) => answer(stream, Buffer.from('pong')))
    const record = (error: Error | null, _duration: number, payload: Buffer) => {
      if (!error) pinged.push(payload)
    }

    server.on('session', (session) => {
      session.on('remoteSettings', () => session.ping(Buffer.from('podctl!!'), record))
    })
    await call(channel(path).channel)
    await expect.poll(() => pinged.map(String)).toEqual(['podctl!!'])
  })

  it('GOAWAY mid-call: the stream the runtime took finishes, the one above last-stream-id fails UNAVAILABLE', async () => {
    const streams: ServerHttp2Stream[] = []
    const {path} = await http2Server({}, (stream) => {
      streams.push(stream)
      if (streams.length < 2) return
      stream.session!.goaway(ErrorCode.NO_ERROR, streams[0].id)
      setTimeout(() => answer(streams[0], Buffer.from('first')), 20)
    })
    const {channel: target, gone} = channel(path)
    const first = call(target)
    await expect.poll(() => streams.length).toBe(1)
    const second = call(target)
    await expect(second).rejects.toMatchObject({code: Status.UNAVAILABLE, details: 'Connection dropped'})
    expect(String(await first)).toBe('first')
    expect(gone()).toBe(true)
  })
})

interface RawPeer {
  path: string
  /** The frames the client sent (after its preface), and whether its socket closed. */
  frames: Frame[]
  closed: () => boolean
}

/**
 * A server that writes raw bytes: `greet` on connect (by default its SETTINGS), `respond` once a
 * request has fully arrived (HEADERS, then DATA ending the stream).
 */
async function rawPeer(respond: (streamId: number, write: (bytes: Buffer) => void) => void, greet = settingsFrame([])): Promise<RawPeer> {
  const path = nextPath()
  const frames: Frame[] = []
  let closed = false
  const sockets = new Set<Socket>()
  const server = createNetServer((socket) => {
    sockets.add(socket)
    const reader = new FrameReader(2 ** 24)
    let preface = Buffer.alloc(0)
    socket.on('error', () => {})
    socket.on('close', () => (closed = true))
    socket.write(greet)
    socket.on('data', (chunk: Buffer) => {
      if (preface.length < CLIENT_PREFACE.length) {
        preface = Buffer.concat([preface, chunk])
        if (preface.length < CLIENT_PREFACE.length) return
        chunk = preface.subarray(CLIENT_PREFACE.length)
      }

      for (const frame of reader.push(chunk)) {
        frames.push(frame)
        if (frame.type === FrameType.DATA && frame.flags & Flag.END_STREAM) respond(frame.streamId, (bytes) => socket.write(bytes))
      }
    })
  })
  await new Promise<void>((resolve) => {
    server.listen(path, resolve)
  })
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  )
  return {path, frames, closed: () => closed}
}

const block = (fields: HeaderField[]) => encodeHeaders(fields)
const responseHeaders = block([
  [':status', '200'],
  ['content-type', 'application/grpc'],
])
const okTrailers = block([
  ['grpc-status', '0'],
  ['grpc-message', ''],
])

/** A padded payload: Pad Length, the content, `padding` zero bytes. */
const padded = (content: Buffer, padding: number) => Buffer.concat([Buffer.of(padding), content, Buffer.alloc(padding)])

describe('frames as a runtime may send them', () => {
  it('reads headers split over HEADERS (padded, with priority) and CONTINUATION, padded DATA, and trailers in two frames', async () => {
    const message = grpcFrame(Buffer.from('split and padded'))
    const peer = await rawPeer((id, write) => {
      const priority = Buffer.from([0, 0, 0, 0, 16])
      write(
        encodeFrame(
          FrameType.HEADERS,
          Flag.PADDED | Flag.PRIORITY,
          id,
          padded(Buffer.concat([priority, responseHeaders.subarray(0, 3)]), 7),
        ),
      )
      write(encodeFrame(FrameType.CONTINUATION, Flag.END_HEADERS, id, responseHeaders.subarray(3)))
      write(encodeFrame(FrameType.DATA, Flag.PADDED, id, padded(message.subarray(0, 9), 200)))
      write(encodeFrame(FrameType.DATA, 0, id, message.subarray(9)))
      write(encodeFrame(FrameType.HEADERS, Flag.END_STREAM, id, okTrailers.subarray(0, 5)))
      write(encodeFrame(FrameType.CONTINUATION, 0, id, okTrailers.subarray(5, 8)))
      write(encodeFrame(FrameType.CONTINUATION, Flag.END_HEADERS, id, okTrailers.subarray(8)))
    })
    expect(String(await call(channel(peer.path).channel))).toBe('split and padded')
    // The client acknowledged the peer's SETTINGS and announced its own, with push off and the 16 MiB window.
    const settings = peer.frames.filter((frame) => frame.type === FrameType.SETTINGS)
    expect(settings.map((frame) => frame.flags)).toEqual([0, Flag.ACK])
    // ENABLE_PUSH (2) = 0, INITIAL_WINDOW_SIZE (4) = 16 MiB.
    expect(settings[0].payload.toString('hex')).toBe('000200000000000401000000')
    const widen = peer.frames.find((frame) => frame.type === FrameType.WINDOW_UPDATE && frame.streamId === 0)
    expect(widen?.payload.readUInt32BE(0)).toBe(16 * MiB - 65_535)
  })

  it('a peer that never sends SETTINGS times out; one that speaks something else is refused at once', async () => {
    const silent = await rawPeer(() => {}, Buffer.alloc(0))
    expect(await channel(silent.path, 300).channel.connected).toBe('TIMEOUT')
    const http1 = await rawPeer(() => {}, Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n'))
    const started = Date.now()
    expect(await channel(http1.path, 5000).channel.connected).toBe('REFUSED')
    expect(Date.now() - started).toBeLessThan(4000)
  })

  it('a channel closed while its silent peer has not answered settles at once, without waiting for the connect timeout', async () => {
    const silent = await rawPeer(() => {}, Buffer.alloc(0))
    const {channel: target, gone} = channel(silent.path, 60_000)
    await expect.poll(() => silent.frames.length).toBeGreaterThan(0)
    target.close()
    expect(await target.connected).toBe('REFUSED')
    expect(gone()).toBe(true)
    await expect.poll(() => silent.closed()).toBe(true)
  })

  it('a closing channel ends once the call it waited for gives up, even if that call never reached the wire', async () => {
    const silent = await rawPeer(() => {}, Buffer.alloc(0))
    const {channel: target} = channel(silent.path, 60_000)
    const waiting = call(target, Buffer.from('queued'), 200)
    target.close()
    await expect(waiting).rejects.toMatchObject({code: Status.DEADLINE_EXCEEDED})
    expect(await target.connected).toBe('REFUSED')
    await expect.poll(() => silent.closed()).toBe(true)
  })

  const malformed: Array<[string, (id: number) => Buffer, number]> = [
    ['DATA on stream 0', () => encodeFrame(FrameType.DATA, 0, 0, Buffer.from('x')), ErrorCode.PROTOCOL_ERROR],
    ['a frame over the 16 KiB maximum', (id) => encodeFrame(FrameType.DATA, 0, id, Buffer.alloc(16_385)), ErrorCode.FRAME_SIZE_ERROR],
    ['header index 0', (id) => encodeFrame(FrameType.HEADERS, Flag.END_HEADERS, id, Buffer.of(0x80)), ErrorCode.COMPRESSION_ERROR],
    [
      'a frame between HEADERS and its CONTINUATION',
      (id) => Buffer.concat([encodeFrame(FrameType.HEADERS, 0, id, responseHeaders), encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8))]),
      ErrorCode.PROTOCOL_ERROR,
    ],
    ['padding as long as the frame', (id) => encodeFrame(FrameType.DATA, Flag.PADDED, id, Buffer.of(4, 1, 2, 3)), ErrorCode.PROTOCOL_ERROR],
    ['a PING of 7 bytes', () => encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(7)), ErrorCode.FRAME_SIZE_ERROR],
    ['a WINDOW_UPDATE of 0', () => encodeFrame(FrameType.WINDOW_UPDATE, 0, 0, Buffer.alloc(4)), ErrorCode.PROTOCOL_ERROR],
    ['PUSH_PROMISE', (id) => encodeFrame(FrameType.PUSH_PROMISE, Flag.END_HEADERS, id, Buffer.alloc(4)), ErrorCode.PROTOCOL_ERROR],
    [
      'HEADERS on a stream never opened',
      () => encodeFrame(FrameType.HEADERS, Flag.END_HEADERS, 9, responseHeaders),
      ErrorCode.PROTOCOL_ERROR,
    ],
  ]

  it.each(malformed)(
    '%s: the call fails INTERNAL, the peer gets GOAWAY with the reason, the connection closes',
    async (_name, bad, code) => {
      const peer = await rawPeer((id, write) => write(bad(id)))
      const {channel: target, gone} = channel(peer.path)
      const failure = call(target)
      await expect(failure).rejects.toMatchObject({code: Status.INTERNAL})
      await expect(failure).rejects.toThrow(/HTTP\/2 protocol error from the runtime: /)
      const goawayCode = () => peer.frames.find((frame) => frame.type === FrameType.GOAWAY)?.payload.readUInt32BE(4)
      await expect.poll(goawayCode).toBe(code)
      await expect.poll(() => peer.closed()).toBe(true)
      expect(gone()).toBe(true)
    },
  )
})
