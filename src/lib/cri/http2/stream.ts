/**
 * One client stream (RFC 9113 section 5.1) from the caller's side: its request (a header block and
 * a body sent with END_STREAM), what arrives for it, and how it ended. The connection drives it;
 * the caller sees only its handlers and cancel().
 */
import {ErrorCode} from './frames.js'
import type {HeaderField} from './hpack.js'

/** How a stream ended, as the caller maps it to a gRPC status. */
export type StreamEnd =
  /** The peer ended it: END_STREAM (code NO_ERROR) or RST_STREAM with its code. */
  | {kind: 'closed'; code: number}
  /** The connection went (closed, failed, or GOAWAY before the runtime took the stream). */
  | {kind: 'dropped'}
  /** The peer broke HTTP/2; the connection was closed. */
  | {kind: 'protocol'; message: string}

export interface StreamHandlers {
  /** Each header block: the response headers, then trailers (or only one, for Trailers-Only). */
  onHeaders(fields: HeaderField[], endStream: boolean): void
  onData(chunk: Buffer): void
  /** Called once, last; never after the caller cancelled. */
  onEnd(end: StreamEnd): void
}

export interface StreamOwner {
  /** Ends the stream from this side with RST_STREAM `code`. */
  reset(stream: ClientStream, code: number): void
}

export class ClientStream {
  /** Assigned when the stream is opened on the wire (0 while queued behind MAX_CONCURRENT_STREAMS). */
  id = 0
  /** What the peer still lets this stream send (section 6.9). */
  sendWindow = 0
  /** What this side still lets the peer send on the stream. */
  receiveWindow = 0
  /** Bytes taken in since the last WINDOW_UPDATE this side sent for the stream. */
  unacknowledged = 0
  private sent = 0
  private remoteEnded = false
  private ended = false

  constructor(
    readonly headerBlock: Buffer,
    private readonly body: Buffer,
    private readonly handlers: StreamHandlers,
    private readonly owner: StreamOwner,
  ) {}

  get isEnded(): boolean {
    return this.ended
  }

  /** True while the peer may still send on it: WINDOW_UPDATEs for it are worth sending. */
  get receiving(): boolean {
    return !this.ended && !this.remoteEnded
  }

  /** The body still to send (with END_STREAM on its last frame). */
  get unsent(): number {
    return this.body.length - this.sent
  }

  get allSent(): boolean {
    return this.sent >= this.body.length
  }

  /** The caller gives up (deadline, abort, a bad answer): RST_STREAM CANCEL, or just dequeued if never opened. */
  cancel(code: number): void {
    if (this.ended) return
    this.ended = true
    this.owner.reset(this, code)
  }

  /** The next piece of body the windows allow, at most `limit` bytes; marks it sent. */
  takeBody(limit: number): Buffer {
    const piece = this.body.subarray(this.sent, this.sent + Math.max(0, Math.min(limit, this.sendWindow)))
    this.sent += piece.length
    this.sendWindow -= piece.length
    return piece
  }

  /** Both sides sent END_STREAM: the stream is closed on the wire, and no RST_STREAM may follow. */
  get closedOnWire(): boolean {
    return this.remoteEnded && this.allSent
  }

  receiveHeaders(fields: HeaderField[], endStream: boolean): void {
    if (this.ended) return
    this.remoteEnded ||= endStream
    this.handlers.onHeaders(fields, endStream)
    if (endStream) this.endRemote()
  }

  receiveData(chunk: Buffer, endStream: boolean): void {
    if (this.ended) return
    this.remoteEnded ||= endStream
    if (chunk.length > 0) this.handlers.onData(chunk)
    if (endStream) this.endRemote()
  }

  /** Ends it for a reason the connection knows (RST_STREAM from the peer, the connection gone). */
  finish(end: StreamEnd): void {
    if (this.ended) return
    this.ended = true
    this.handlers.onEnd(end)
  }

  private endRemote(): void {
    // A request body still unsent when the answer is complete has no reader left: stop sending it.
    if (!this.allSent) this.owner.reset(this, ErrorCode.CANCEL)
    this.finish({kind: 'closed', code: 0})
  }
}
