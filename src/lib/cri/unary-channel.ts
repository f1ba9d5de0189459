/**
 * The light transport for unary CRI calls: one HTTP/2 connection per endpoint, spoken by podctl
 * itself over node:net (http2/connection.ts). grpc-js costs a command about its own size in
 * start-up (its code, channel machinery and the built-ins it loads: zlib, dns, child_process…),
 * and node:http2 4–6 ms more (tls, http, crypto: none in Node's start-up snapshot); a command
 * that only lists needs none of it. Streaming calls and the other gRPC users still load grpc-js,
 * when they are used.
 */
import {Http2Connection} from './http2/connection.js'
import {sendUnary, type UnaryRequest} from './unary-call.js'

export type ConnectOutcome = 'READY' | 'REFUSED' | 'TIMEOUT'

export interface UnaryChannelOptions {
  socketPath: string
  connectTimeoutMs: number
  /** HTTP/2's 64 KiB start window made a big listing (8 MB at 10 000 containers) wait a round trip per 64 KiB. */
  windowBytes: number
  /** Told once when the session can take no more calls (closed, GOAWAY, failed): its owner forgets it. */
  onGone: () => void
}

export class UnaryChannel {
  /** READY once the runtime's SETTINGS arrived (as grpc-js counts a channel ready; a frozen runtime never gets there). */
  readonly connected: Promise<ConnectOutcome>
  private readonly connection: Http2Connection
  private active = 0
  private connecting = true

  constructor(private readonly options: UnaryChannelOptions) {
    let settle: (outcome: ConnectOutcome) => void = () => {}
    const settled = new Promise<ConnectOutcome>((resolve) => {
      settle = resolve
    })
    this.connection = new Http2Connection({
      socketPath: options.socketPath,
      windowBytes: options.windowBytes,
      // Refused, reset or closed before the runtime spoke HTTP/2: a stale socket or a runtime going down.
      onSettled: (outcome) => settle(outcome),
      // Told once; the connection never calls it twice.
      onGone: () => options.onGone(),
    })
    this.connected = this.watchConnect(settled)
  }

  /** Sent at once, even while connecting: the connection holds the stream until the runtime's SETTINGS are in. */
  async call(request: UnaryRequest): Promise<Buffer> {
    this.hold(1)
    try {
      return await sendUnary(this.connection, request)
    } finally {
      this.hold(-1)
    }
  }

  close(): void {
    this.connection.close()
  }

  private watchConnect(settled: Promise<ConnectOutcome>): Promise<ConnectOutcome> {
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<ConnectOutcome>((resolve) => {
      timer = setTimeout(() => resolve('TIMEOUT'), this.options.connectTimeoutMs)
    })
    return Promise.race([settled, timedOut]).then((outcome) => {
      clearTimeout(timer)
      if (outcome !== 'READY') this.connection.destroy()
      this.connecting = false
      this.hold(0)
      return outcome
    })
  }

  /**
   * The socket keeps Node alive only while there is something to wait for (connecting, a call in
   * flight): an idle session never holds a one-shot command open, nor a library user's process.
   */
  private hold(change: number): void {
    this.active += change
    if (this.connection.destroyed) return
    if (this.connecting || this.active > 0) this.connection.ref()
    else this.connection.unref()
  }
}
