import http from 'node:http'
import https from 'node:https'
import type {Duplex} from 'node:stream'

import {DeadlineExceededError, formatMs, StreamingUnavailableError} from '../errors.js'
import {
  controlStreamId,
  ControlType,
  encodeDataFrame,
  encodeGoAway,
  encodeRstStream,
  encodeSynStream,
  FLAG_FIN,
  type Frame,
  FrameReader,
  HeaderBlockWriter,
  MAX_DATA_FRAME,
  RstStatus,
} from './spdy-frames.js'

/** A small typed listener list (the streams' and session's events). add() returns the removal. */
export class Listeners<T extends unknown[] = []> {
  private readonly listeners = new Set<(...args: T) => void>()

  add(listener: (...args: T) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  emit(...args: T): void {
    for (const listener of this.listeners) listener(...args)
  }
}

/**
 * One stream of a SPDY session, opened by this client: `data` (what the server sent), `ended` (the
 * server's half is done: FIN, RST_STREAM or the session closed; once).
 */
export class SpdyStream {
  readonly data = new Listeners<[Buffer]>()
  readonly ended = new Listeners()
  /** The server's half is done. */
  remoteDone = false
  /** Our half is done (FIN sent). */
  localDone = false
  readonly replied: Promise<void>
  private markReplied!: () => void
  private failReply!: (error: Error) => void

  constructor(
    readonly session: SpdySession,
    readonly id: number,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    this.replied = new Promise((resolve, reject) => {
      this.markReplied = resolve
      this.failReply = reject
    })
    this.replied.catch(() => {})
  }

  /** Sends data in frames; false when the socket buffer is full (wait for session.drain()). */
  write(data: Buffer): boolean {
    if (this.localDone || this.session.closed) return false
    let ok = true
    for (let at = 0; at < data.length; at += MAX_DATA_FRAME) {
      ok = this.session.send(encodeDataFrame(this.id, data.subarray(at, at + MAX_DATA_FRAME)))
    }

    return ok
  }

  /** Half-closes our side (an empty data frame with FIN), as closing stdin does. */
  end(): void {
    if (this.localDone) return
    this.localDone = true
    if (!this.session.closed) this.session.send(encodeDataFrame(this.id, Buffer.alloc(0), true))
  }

  /** Abandons the stream both ways. */
  reset(): void {
    const open = !this.localDone || !this.remoteDone
    this.localDone = true
    if (open && !this.session.closed) this.session.send(encodeRstStream(this.id, RstStatus.CANCEL))
    this.finishRemote()
    this.session.forget(this.id)
  }

  /** @internal */
  onReply(): void {
    this.markReplied()
  }

  /** @internal */
  finishRemote(error?: Error): void {
    this.failReply(error ?? new Error(`stream ${this.id} ended before the server accepted it`))
    if (this.remoteDone) return
    this.remoteDone = true
    this.ended.emit()
  }
}

export interface ConnectOptions {
  /** X-Stream-Protocol-Version to ask for, e.g. v4.channel.k8s.io or portforward.k8s.io. */
  protocol: string
  /** Deadline of the connect and upgrade (the stream then lasts as long as the session). */
  timeoutMs: number
}

/**
 * A SPDY/3.1 client session over an HTTP connection upgraded the way k8s.io/apimachinery's
 * httpstream does it (POST, Connection: Upgrade, Upgrade: SPDY/3.1, X-Stream-Protocol-Version).
 * `closing` fires once when the connection ends, for whatever reason.
 */
export class SpdySession {
  readonly closing = new Listeners()
  closed = false
  private nextId = 1
  private readonly streams = new Map<number, SpdyStream>()
  private readonly headerWriter = new HeaderBlockWriter()
  private readonly reader = new FrameReader()

  constructor(private readonly socket: Duplex) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk))
    socket.on('error', () => this.shutdown())
    socket.on('close', () => this.shutdown())
  }

  /** Opens a stream (SYN_STREAM); wait for `replied` before sending data, as the server drops data on unreplied streams. */
  openStream(headers: Readonly<Record<string, string>>): SpdyStream {
    const stream = new SpdyStream(this, this.nextId, headers)
    this.nextId += 2
    this.streams.set(stream.id, stream)
    this.send(encodeSynStream(stream.id, this.headerWriter.encode(headers)))
    return stream
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id)
  }

  /** @internal */
  send(frame: Buffer): boolean {
    if (this.closed) return false
    return this.socket.write(frame)
  }

  /** Resolves once the socket can take more (or is gone). */
  drain(): Promise<void> {
    if (this.closed || !this.socket.writableNeedDrain) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done)
        removeClose()
        resolve()
      }

      this.socket.once('drain', done)
      const removeClose = this.closing.add(done)
    })
  }

  /** Stops reading from the server (a local output is full); resume() reads on. */
  pause(): void {
    this.socket.pause()
  }

  resume(): void {
    this.socket.resume()
  }

  /** Ends the session politely: GOAWAY, then the connection. */
  close(): void {
    if (this.closed) return
    this.send(encodeGoAway(0))
    this.socket.end()
    this.shutdown()
    // A server that never closes its side must not hold the process open.
    setTimeout(() => this.socket.destroy(), 1000).unref()
  }

  private receive(chunk: Buffer): void {
    let frames: Frame[]
    try {
      frames = this.reader.push(chunk)
    } catch {
      this.socket.destroy()
      return
    }

    for (const frame of frames) this.handle(frame)
  }

  private handle(frame: Frame): void {
    if (frame.kind === 'data') {
      const stream = this.streams.get(frame.streamId)
      if (!stream) return
      if (frame.data.length > 0) stream.data.emit(frame.data)
      if (frame.flags & FLAG_FIN) this.finish(stream)
      return
    }

    const stream = this.streams.get(controlStreamId(frame))
    switch (frame.type) {
      case ControlType.SYN_REPLY: {
        stream?.onReply()
        if (stream && frame.flags & FLAG_FIN) this.finish(stream)
        break
      }

      case ControlType.RST_STREAM: {
        if (stream) {
          stream.localDone = true
          this.finish(stream, new Error(`the server refused stream ${stream.id}`))
        }

        break
      }

      case ControlType.PING: {
        // Ours would be odd; the server's are echoed unchanged.
        this.send(Buffer.concat([Buffer.from([0x80, 3, 0, ControlType.PING, 0, 0, 0, 4]), frame.payload.subarray(0, 4)]))
        break
      }

      case ControlType.SYN_STREAM: {
        // Servers of these protocols never open streams; refuse politely.
        this.send(encodeRstStream(controlStreamId(frame), RstStatus.PROTOCOL_ERROR))
        break
      }

      default: {
        break // GOAWAY: the server closes the connection once its streams are gone; HEADERS, SETTINGS, WINDOW_UPDATE: unused
      }
    }
  }

  private finish(stream: SpdyStream, error?: Error): void {
    stream.finishRemote(error)
    if (stream.localDone) this.streams.delete(stream.id)
  }

  private shutdown(): void {
    if (this.closed) return
    this.closed = true
    for (const stream of this.streams.values()) stream.finishRemote(new Error('the streaming connection closed'))
    this.streams.clear()
    this.socket.destroy()
    this.closing.emit()
  }
}

/** Connects to a streaming URL and upgrades to SPDY/3.1 with the given sub-protocol, within the deadline. */
export function connectSpdy(url: URL, options: ConnectOptions): Promise<SpdySession> {
  const where = `${url.protocol}//${url.host}`
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http
    const request = transport.request(url, {
      method: 'POST',
      headers: {Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': options.protocol, 'Content-Length': '0'},
    })
    const timer = setTimeout(() => {
      request.destroy()
      reject(
        new DeadlineExceededError(`the streaming server at ${where} did not answer within ${formatMs(options.timeoutMs)}; raise --timeout`),
      )
    }, options.timeoutMs)
    const fail = (error: Error) => {
      clearTimeout(timer)
      reject(error)
    }

    request.on('error', (error: NodeJS.ErrnoException) => {
      fail(new StreamingUnavailableError(`cannot reach the runtime's streaming server at ${where} (${error.code ?? error.message})`))
    })
    request.on('response', (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (text: string) => {
        if (body.length < 500) body += text
      })
      response.on('end', () => {
        const why = body.trim().split('\n')[0] || response.statusMessage || ''
        fail(
          new StreamingUnavailableError(`the streaming server at ${where} refused the session: HTTP ${response.statusCode} ${why}`.trim()),
        )
      })
    })
    request.on('upgrade', (response, socket, head) => {
      clearTimeout(timer)
      const agreed = String(response.headers['x-stream-protocol-version'] ?? '')
      if (agreed !== options.protocol) {
        socket.destroy()
        reject(
          new StreamingUnavailableError(`the streaming server at ${where} does not speak ${options.protocol} (it offered "${agreed}")`),
        )
        return
      }

      socket.setNoDelay(true)
      // Bytes that came with the 101 answer are read first, before the session's own reads.
      if (head.length > 0) socket.unshift(head)
      resolve(new SpdySession(socket))
    })
    request.end()
  })
}
