import http from 'node:http'
import type {AddressInfo} from 'node:net'
import type {Duplex} from 'node:stream'
import zlib from 'node:zlib'

import {
  controlStreamId,
  ControlType,
  decodeHeaderPairs,
  encodeControlFrame,
  encodeDataFrame,
  encodeRstStream,
  FLAG_FIN,
  FrameReader,
} from '../../src/lib/streaming/spdy-frames.js'

/** One stream the client opened, as the fake server sees it. */
export interface ServerStream {
  id: number
  headers: Record<string, string>
  data: Buffer[]
  /** The client sent FIN. */
  finished: boolean
  write(data: Buffer | string): void
  /** FIN from the server. */
  end(): void
  reset(): void
}

export interface FakeConnection {
  protocol: string
  streams: ServerStream[]
  close(): void
}

/**
 * A loopback stand-in for the runtime's streaming server (k8s httpstream over SPDY/3.1): it upgrades
 * POSTs that ask for one of `protocols`, replies to every SYN_STREAM, and hands streams and their data
 * to the test's `onStream`/`onData`/`onFin` hooks. Header blocks are inflated the way a zlib reader does.
 */
export class FakeSpdyServer {
  readonly connections: FakeConnection[] = []
  onStream: (stream: ServerStream, connection: FakeConnection) => void = () => {}
  onData: (stream: ServerStream, data: Buffer, connection: FakeConnection) => void = () => {}
  onFin: (stream: ServerStream, connection: FakeConnection) => void = () => {}
  private readonly server: http.Server
  private readonly sockets = new Set<Duplex>()

  constructor(
    private readonly protocols: readonly string[],
    private readonly refuse?: {status: number; body: string},
    /** Upgrades but never answers a SYN_STREAM (a hung server). */
    private readonly silent = false,
  ) {
    this.server = http.createServer((_request, response) => {
      response.writeHead(400).end('not an upgrade')
    })
    this.server.on('upgrade', (request, socket) => this.upgrade(request, socket))
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => {
      this.server.listen(0, '127.0.0.1', resolve)
    })
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/exec/token`
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise((resolve) => {
      this.server.close(resolve)
    })
  }

  private upgrade(request: http.IncomingMessage, socket: Duplex): void {
    this.sockets.add(socket)
    const asked = String(request.headers['x-stream-protocol-version'] ?? '')
    if (this.refuse) {
      socket.end(`HTTP/1.1 ${this.refuse.status} Refused\r\nContent-Length: ${this.refuse.body.length}\r\n\r\n${this.refuse.body}`)
      return
    }

    const ok = request.method === 'POST' && /upgrade/i.test(String(request.headers.connection)) && request.headers.upgrade === 'SPDY/3.1'
    if (!ok || !this.protocols.includes(asked)) {
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')
      return
    }

    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${asked}\r\n\r\n`,
    )
    const streams = new Map<number, ServerStream>()
    const connection: FakeConnection = {protocol: asked, streams: [], close: () => socket.end()}
    this.connections.push(connection)
    const reader = new FrameReader()
    let compressed = Buffer.alloc(0)
    let inflatedLength = 0
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if (frame.kind === 'data') {
          const stream = streams.get(frame.streamId)
          if (!stream) continue
          if (frame.data.length > 0) {
            stream.data.push(frame.data)
            this.onData(stream, frame.data, connection)
          }

          if (frame.flags & FLAG_FIN) {
            stream.finished = true
            this.onFin(stream, connection)
          }

          continue
        }

        if (frame.type !== ControlType.SYN_STREAM || this.silent) continue
        // One zlib stream for all header blocks: inflate everything so far, keep the new part.
        compressed = Buffer.concat([compressed, frame.payload.subarray(10)])
        const inflated = zlib.inflateSync(compressed, {finishFlush: zlib.constants.Z_SYNC_FLUSH})
        const headers = decodeHeaderPairs(inflated.subarray(inflatedLength))
        inflatedLength = inflated.length
        const id = controlStreamId(frame)
        const stream: ServerStream = {
          id,
          headers,
          data: [],
          finished: false,
          write: (data) => socket.write(encodeDataFrame(id, Buffer.from(data))),
          end: () => socket.write(encodeDataFrame(id, Buffer.alloc(0), true)),
          reset: () => socket.write(encodeRstStream(id, 5)),
        }
        streams.set(id, stream)
        connection.streams.push(stream)
        const reply = Buffer.alloc(4)
        reply.writeUInt32BE(id, 0)
        socket.write(encodeControlFrame(ControlType.SYN_REPLY, 0, reply))
        this.onStream(stream, connection)
      }
    })
    socket.on('error', () => {})
  }
}
