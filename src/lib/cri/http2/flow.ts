/**
 * Flow control (RFC 9113 section 5.2 and 6.9) for one connection, both ways. Receiving: the
 * connection and each stream get `windowBytes` (16 MiB: a 64 KiB window made a big listing wait a
 * round trip per 64 KiB), given back by WINDOW_UPDATE once a quarter of it was taken in, so an
 * answer of any size (up to the 64 MiB cap) keeps flowing. Sending: a request body goes out no
 * faster than the peer's windows allow.
 */
import {ConnectionError, DEFAULT_WINDOW_BYTES, ErrorCode, MAX_WINDOW_BYTES, windowUpdateFrame} from './frames.js'
import type {ClientStream} from './stream.js'

export class FlowControl {
  /** What the peer still lets the connection send. */
  private sendWindow = DEFAULT_WINDOW_BYTES
  /** The peer's SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window. */
  private peerInitialWindow = DEFAULT_WINDOW_BYTES
  /** What this side still lets the peer send on the connection. */
  private receiveWindow: number
  private unacknowledged = 0
  private readonly updateEvery: number

  constructor(
    private readonly windowBytes: number,
    private readonly write: (frame: Buffer) => void,
  ) {
    // The connection's preface widens its window from 64 KiB to windowBytes.
    this.receiveWindow = Math.max(windowBytes, DEFAULT_WINDOW_BYTES)
    this.updateEvery = Math.max(1, Math.floor(windowBytes / 4))
  }

  opened(stream: ClientStream): void {
    stream.sendWindow = this.peerInitialWindow
    stream.receiveWindow = this.windowBytes
  }

  /**
   * A DATA frame of `length` bytes (padding included: it counts too) arrived, for `stream` or for
   * one already closed (whose bytes still count against the connection's window).
   */
  received(length: number, stream: ClientStream | undefined): void {
    this.receiveWindow -= length
    if (this.receiveWindow < 0) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA beyond the connection window')
    this.unacknowledged += length
    if (this.unacknowledged >= this.updateEvery) {
      this.write(windowUpdateFrame(0, this.unacknowledged))
      this.receiveWindow += this.unacknowledged
      this.unacknowledged = 0
    }

    if (!stream) return
    stream.receiveWindow -= length
    if (stream.receiveWindow < 0) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, `DATA beyond stream ${stream.id}'s window`)
    stream.unacknowledged += length
    if (stream.unacknowledged >= this.updateEvery && stream.receiving) {
      this.write(windowUpdateFrame(stream.id, stream.unacknowledged))
      stream.receiveWindow += stream.unacknowledged
      stream.unacknowledged = 0
    }
  }

  /** The peer's WINDOW_UPDATE, for the connection (no stream) or one stream. */
  windowUpdate(increment: number, stream: ClientStream | undefined): void {
    if (increment === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0')
    if (stream) stream.sendWindow = grown(stream.sendWindow, increment)
    else this.sendWindow = grown(this.sendWindow, increment)
  }

  /** A new SETTINGS_INITIAL_WINDOW_SIZE moves every open stream's window by the difference (section 6.9.2). */
  setPeerInitialWindow(value: number, open: Iterable<ClientStream>): void {
    const change = value - this.peerInitialWindow
    this.peerInitialWindow = value
    for (const stream of open) stream.sendWindow = grown(stream.sendWindow, change)
  }

  /** The most the connection's window lets one DATA frame carry. */
  sendable(maxFrameBytes: number): number {
    return Math.max(0, Math.min(maxFrameBytes, this.sendWindow))
  }

  sent(length: number): void {
    this.sendWindow -= length
  }
}

function grown(window: number, change: number): number {
  const next = window + change
  if (next > MAX_WINDOW_BYTES) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'a flow-control window over 2^31-1')
  return next
}
