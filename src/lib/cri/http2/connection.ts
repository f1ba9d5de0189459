/**
 * A client HTTP/2 connection over a unix socket, with prior knowledge (h2c, RFC 9113 section 3.3),
 * doing what unary gRPC calls need and no more: open streams that send one header block and one
 * body, read header blocks and DATA back, keep flow control moving both ways, answer SETTINGS and
 * PING, and end cleanly on GOAWAY, RST_STREAM, a closed socket or a peer that breaks the protocol.
 * Built on node:net, which is in Node's start-up snapshot, where node:http2 costs a command 4–6 ms
 * of loading (tls, http, crypto…) before it sends a byte.
 *
 * The files: frames.ts (framing), inbound.ts (header blocks, SETTINGS), hpack.ts, huffman.ts and
 * hpack-tables.ts (header compression), stream.ts (one stream), flow.ts (windows), this file (the
 * connection's life and the frames' dispatch).
 */
import {connect, type Socket} from 'node:net'

import {
  CLIENT_PREFACE,
  ConnectionError,
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_WINDOW_BYTES,
  encodeFrame,
  ErrorCode,
  Flag,
  type Frame,
  FrameReader,
  FrameType,
  goawayFrame,
  headerFrames,
  rstStreamFrame,
  Setting,
  settingsFrame,
  unpad,
  windowUpdateFrame,
} from './frames.js'
import {FlowControl} from './flow.js'
import {encodeHeaders, type HeaderField, HpackDecoder, HpackError} from './hpack.js'
import {checkLength, type HeaderBlock, HeaderBlockAssembler, type PeerSettings, readSettings} from './inbound.js'
import {ClientStream, type StreamEnd, type StreamHandlers} from './stream.js'

export {ErrorCode} from './frames.js'
export type {HeaderField} from './hpack.js'
export type {ClientStream, StreamEnd, StreamHandlers} from './stream.js'

export interface ConnectionOptions {
  socketPath: string
  /** The receive window of the connection and of each stream (SETTINGS_INITIAL_WINDOW_SIZE and a WINDOW_UPDATE). */
  windowBytes: number
  /** Once: the peer's first SETTINGS arrived ('READY'), or the connection ended before it ('REFUSED'). */
  onSettled(outcome: 'READY' | 'REFUSED'): void
  /** Once: the connection takes no more streams (closed, failed, GOAWAY). */
  onGone(): void
}

/** Stream ids are 31 bits; a client's are odd. */
const LAST_STREAM_ID = 2 ** 31 - 1

export class Http2Connection {
  private readonly socket: Socket
  private readonly reader = new FrameReader()
  private readonly decoder = new HpackDecoder()
  private readonly blocks = new HeaderBlockAssembler()
  private readonly flow: FlowControl
  /** Open streams by id, in the order they opened (the order their bodies are sent). */
  private readonly streams = new Map<number, ClientStream>()
  /** Streams waiting for the peer's SETTINGS or for a slot under its MAX_CONCURRENT_STREAMS. */
  private readonly queued: ClientStream[] = []
  private nextStreamId = 1
  private maxConcurrentStreams = Number.POSITIVE_INFINITY
  private peerMaxFrameBytes = DEFAULT_MAX_FRAME_BYTES
  private settled = false
  /** GOAWAY came, or close() was asked: no new streams; the socket ends when the last one does. */
  private draining = false
  private gone = false
  private closed = false

  constructor(private readonly options: ConnectionOptions) {
    this.flow = new FlowControl(options.windowBytes, (frame) => this.write(frame))
    this.socket = connect({path: options.socketPath})
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk))
    // The outcome of an error is decided in 'close', which always follows it.
    this.socket.on('error', () => {})
    this.socket.on('close', () => this.onSocketClosed())
    this.write(this.preface())
  }

  get destroyed(): boolean {
    return this.closed
  }

  /** Opens a stream (or queues it while the peer allows no more); throws when the connection takes no more. */
  request(headers: readonly HeaderField[], body: Buffer, handlers: StreamHandlers): ClientStream {
    if (this.draining || this.closed) throw new Error('the connection takes no more streams')
    const stream = new ClientStream(encodeHeaders(headers), body, handlers, this)
    this.queued.push(stream)
    this.openQueued()
    return stream
  }

  /** Part of StreamOwner: ends a stream from this side. */
  reset(stream: ClientStream, code: number): void {
    const waiting = this.queued.indexOf(stream)
    if (waiting !== -1) {
      // Never opened: nothing to tell the peer, but a closing connection may now be idle.
      this.queued.splice(waiting, 1)
      this.endIfIdle()
      return
    }

    if (!this.streams.has(stream.id)) return
    if (!stream.closedOnWire) this.write(rstStreamFrame(stream.id, code))
    this.forget(stream)
  }

  /** Like node's session.close(): no new streams, the socket ends once the open ones have. */
  close(): void {
    if (this.closed) return
    this.draining = true
    this.endIfIdle()
  }

  destroy(): void {
    this.socket.destroy()
    this.onSocketClosed()
  }

  ref(): void {
    this.socket.ref()
  }

  unref(): void {
    this.socket.unref()
  }

  private preface(): Buffer {
    const settings = settingsFrame([
      [Setting.ENABLE_PUSH, 0],
      [Setting.INITIAL_WINDOW_SIZE, this.options.windowBytes],
    ])
    // The connection's window starts at 64 KiB whatever SETTINGS say (section 6.9.2): widened by WINDOW_UPDATE.
    const widen = this.options.windowBytes - DEFAULT_WINDOW_BYTES
    return Buffer.concat([CLIENT_PREFACE, settings, ...(widen > 0 ? [windowUpdateFrame(0, widen)] : [])])
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return
    this.socket.cork()
    try {
      for (const frame of this.reader.push(chunk)) {
        this.dispatch(frame)
        if (this.closed) break
      }
    } catch (error) {
      this.fail(error)
    } finally {
      this.socket.uncork()
    }
  }

  private dispatch(frame: Frame): void {
    this.blocks.checkInterleaving(frame)
    if (!this.settled && frame.type !== FrameType.SETTINGS) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'the server did not start with SETTINGS')
    }

    switch (frame.type) {
      case FrameType.DATA:
        return this.onData(frame)
      case FrameType.HEADERS:
        return this.onHeaderBlock(this.blocks.headers(this.checkStream(frame)))
      case FrameType.CONTINUATION:
        return this.onHeaderBlock(this.blocks.continuation(frame))
      case FrameType.PRIORITY:
        return checkLength(frame, 5, 'PRIORITY')
      case FrameType.RST_STREAM:
        return this.onReset(frame)
      case FrameType.SETTINGS:
        return this.onSettings(frame)
      case FrameType.PUSH_PROMISE:
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE after ENABLE_PUSH=0')
      case FrameType.PING:
        return this.onPing(frame)
      case FrameType.GOAWAY:
        return this.onGoaway(frame)
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(frame)
      // Unknown frame types are ignored (section 4.1).
    }
  }

  /** The stream a frame is for: undefined for one already closed; an error for stream 0 or one never opened. */
  private checkStream(frame: Frame): Frame {
    const {streamId} = frame
    if (streamId === 0 || streamId % 2 === 0 || streamId >= this.nextStreamId) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `frame type ${frame.type} on stream ${streamId}, which this client never opened`)
    }

    return frame
  }

  private onData(frame: Frame): void {
    const stream = this.streams.get(this.checkStream(frame).streamId)
    this.flow.received(frame.payload.length, stream)
    stream?.receiveData(unpad(frame), (frame.flags & Flag.END_STREAM) !== 0)
    if (stream?.isEnded) this.forget(stream)
  }

  private onHeaderBlock(complete: HeaderBlock | undefined): void {
    if (!complete) return
    let fields: HeaderField[]
    try {
      // Decoded even for a stream already closed: the dynamic table must follow every block the peer sent.
      fields = this.decoder.decode(complete.block)
    } catch (error) {
      if (error instanceof HpackError) throw new ConnectionError(ErrorCode.COMPRESSION_ERROR, `bad header block: ${error.message}`)
      throw error
    }

    const stream = this.streams.get(complete.streamId)
    stream?.receiveHeaders(fields, complete.endStream)
    if (stream?.isEnded) this.forget(stream)
  }

  private onReset(frame: Frame): void {
    checkLength(this.checkStream(frame), 4, 'RST_STREAM')
    const stream = this.streams.get(frame.streamId)
    if (!stream) return
    this.forget(stream)
    stream.finish({kind: 'closed', code: frame.payload.readUInt32BE(0)})
  }

  private onSettings(frame: Frame): void {
    if (frame.flags & Flag.ACK) {
      checkLength(frame, 0, 'SETTINGS ACK')
      return
    }

    this.apply(readSettings(frame))
    this.write(encodeFrame(FrameType.SETTINGS, Flag.ACK, 0))
    if (!this.settled) {
      this.settled = true
      this.options.onSettled('READY')
    }

    this.openQueued()
  }

  private apply(settings: PeerSettings): void {
    if (settings.maxConcurrentStreams !== undefined) this.maxConcurrentStreams = settings.maxConcurrentStreams
    if (settings.maxFrameSize !== undefined) this.peerMaxFrameBytes = settings.maxFrameSize
    if (settings.initialWindowSize !== undefined) this.flow.setPeerInitialWindow(settings.initialWindowSize, this.streams.values())
    this.sendBodies()
  }

  private onPing(frame: Frame): void {
    if (frame.streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream')
    checkLength(frame, 8, 'PING')
    if ((frame.flags & Flag.ACK) === 0) this.write(encodeFrame(FrameType.PING, Flag.ACK, 0, frame.payload))
  }

  /** Streams the peer did not take fail at once (UNAVAILABLE to the caller); the others may still finish. */
  private onGoaway(frame: Frame): void {
    if (frame.streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream')
    if (frame.payload.length < 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY shorter than 8 bytes')
    const lastStreamId = frame.payload.readUInt32BE(0) & 0x7f_ff_ff_ff
    this.draining = true
    this.tellGone()
    const refused = [...this.queued.splice(0), ...[...this.streams.values()].filter((stream) => stream.id > lastStreamId)]
    for (const stream of refused) {
      this.streams.delete(stream.id)
      stream.finish({kind: 'dropped'})
    }

    this.endIfIdle()
  }

  private onWindowUpdate(frame: Frame): void {
    checkLength(frame, 4, 'WINDOW_UPDATE')
    const stream = frame.streamId === 0 ? undefined : this.streams.get(this.checkStream(frame).streamId)
    if (frame.streamId !== 0 && !stream) return
    this.flow.windowUpdate(frame.payload.readUInt32BE(0) & 0x7f_ff_ff_ff, stream)
    this.sendBodies()
  }

  /** Opens queued streams while the peer's SETTINGS are known and its MAX_CONCURRENT_STREAMS allows. */
  private openQueued(): void {
    while (this.settled && !this.closed && this.queued.length > 0 && this.streams.size < this.maxConcurrentStreams) {
      if (this.nextStreamId > LAST_STREAM_ID) {
        // Stream ids ran out (after a billion calls): this connection is done, the next one starts again.
        this.draining = true
        this.tellGone()
        for (const stream of this.queued.splice(0)) stream.finish({kind: 'dropped'})
        return
      }

      this.open(this.queued.shift()!)
    }
  }

  private open(stream: ClientStream): void {
    stream.id = this.nextStreamId
    this.nextStreamId += 2
    this.streams.set(stream.id, stream)
    this.flow.opened(stream)
    for (const frame of headerFrames(stream.id, stream.headerBlock, stream.allSent, this.peerMaxFrameBytes)) this.write(frame)
    this.sendBodies()
  }

  /** Sends what the windows allow of each open stream's body, oldest stream first. */
  private sendBodies(): void {
    for (const stream of this.streams.values()) {
      while (!stream.allSent) {
        const piece = stream.takeBody(this.flow.sendable(this.peerMaxFrameBytes))
        if (piece.length === 0) break
        this.flow.sent(piece.length)
        this.write(encodeFrame(FrameType.DATA, stream.allSent ? Flag.END_STREAM : 0, stream.id, piece))
      }
    }
  }

  private forget(stream: ClientStream): void {
    this.streams.delete(stream.id)
    this.openQueued()
    this.endIfIdle()
  }

  private endIfIdle(): void {
    if (!this.draining || this.closed || this.streams.size > 0 || this.queued.length > 0) return
    // A peer that never spoke HTTP/2 gets no goodbye: ending would wait for its FIN, which a hung one never sends.
    if (this.settled) this.socket.end(goawayFrame(0, ErrorCode.NO_ERROR, ''))
    else this.socket.destroy()
    this.endAll({kind: 'dropped'})
  }

  /** The peer broke the protocol (or podctl did, reading it): GOAWAY with the reason, then every stream fails. */
  private fail(error: unknown): void {
    const known = error instanceof ConnectionError
    const code = known ? error.code : ErrorCode.INTERNAL_ERROR
    const message = `HTTP/2 protocol error from the runtime: ${(error as Error).message}`
    this.write(goawayFrame(0, code, message.slice(0, 200)))
    this.socket.end(() => this.socket.destroy())
    this.endAll({kind: 'protocol', message})
  }

  private onSocketClosed(): void {
    this.endAll({kind: 'dropped'})
  }

  private endAll(end: StreamEnd): void {
    this.closed = true
    this.draining = true
    const ended = [...this.queued.splice(0), ...this.streams.values()]
    this.streams.clear()
    for (const stream of ended) stream.finish(end)
    if (!this.settled) {
      this.settled = true
      this.options.onSettled('REFUSED')
    }

    this.tellGone()
  }

  private tellGone(): void {
    if (this.gone) return
    this.gone = true
    this.options.onGone()
  }

  private write(frame: Buffer): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(frame)
  }
}
