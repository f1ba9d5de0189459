/**
 * The light transport for unary CRI calls: one HTTP/2 session per endpoint on node:http2 directly.
 * grpc-js costs a command about its own size in start-up (its code, channel machinery and the
 * built-ins it loads: zlib, dns, child_process…), and a command that only lists needs none of it.
 * Streaming calls and the other gRPC users still load grpc-js, when they are used.
 */
import {type ClientHttp2Session, connect as connectHttp2} from 'node:http2'
import {connect as connectSocket} from 'node:net'

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
  private readonly session: ClientHttp2Session
  private active = 0
  private connecting = true

  constructor(private readonly options: UnaryChannelOptions) {
    this.session = connectHttp2('http://localhost', {
      createConnection: () => connectSocket({path: options.socketPath}),
      settings: {initialWindowSize: options.windowBytes, enablePush: false},
      // Node's 10 MB default would reset streams of a big listing arriving in a 16 MiB window.
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
    })
    this.connected = this.watchConnect()
    this.watchGone()
  }

  /** Sent at once, even while connecting: node:http2 holds the stream until the session is up. */
  async call(request: UnaryRequest): Promise<Buffer> {
    this.hold(1)
    try {
      return await sendUnary(this.session, request)
    } finally {
      this.hold(-1)
    }
  }

  close(): void {
    if (!this.session.destroyed) this.session.close()
  }

  private watchConnect(): Promise<ConnectOutcome> {
    const {session} = this
    let timer: NodeJS.Timeout | undefined
    return new Promise<ConnectOutcome>((resolve) => {
      timer = setTimeout(() => resolve('TIMEOUT'), this.options.connectTimeoutMs)
      session.once('remoteSettings', () => {
        session.setLocalWindowSize(this.options.windowBytes)
        resolve('READY')
      })
      // Refused, reset or closed before the runtime spoke HTTP/2: a stale socket or a runtime going down.
      session.once('close', () => resolve('REFUSED'))
      session.on('error', () => resolve('REFUSED'))
    }).then((outcome) => {
      clearTimeout(timer)
      if (outcome !== 'READY') session.destroy()
      this.connecting = false
      this.hold(0)
      return outcome
    })
  }

  private watchGone(): void {
    let told = false
    const gone = () => {
      if (told) return
      told = true
      this.options.onGone()
    }

    this.session.once('close', gone)
    this.session.once('goaway', gone)
    this.session.on('error', gone)
  }

  /**
   * The socket keeps Node alive only while there is something to wait for (connecting, a call in
   * flight): an idle session never holds a one-shot command open, nor a library user's process.
   */
  private hold(change: number): void {
    this.active += change
    if (this.session.destroyed) return
    if (this.connecting || this.active > 0) this.session.ref()
    else this.session.unref()
  }
}
