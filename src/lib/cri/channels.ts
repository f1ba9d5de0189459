/**
 * The connections a CriClient (and the clients derived from it) share, one per endpoint and kind:
 * a light HTTP/2 session for unary calls (unary-channel.ts) and, only once a stream is asked for,
 * a grpc-js channel for server-streaming calls. Both fail to connect with the same
 * RuntimeUnreachableErrors, and both are forgotten when they fail so the next call reconnects.
 */
import {stat as statCallback} from 'node:fs'
import {promisify} from 'node:util'

import {formatMs, RuntimeUnreachableError} from '../errors.js'
import {clampTimerMs} from '../util/duration.js'
import {monotonicMs} from '../util/time.js'
import {socketPath} from './endpoint.js'
import {type ConnectOutcome, UnaryChannel} from './unary-channel.js'

// node:fs with promisify, not node:fs/promises: loading that module (about twenty of Node's internal
// modules) was a millisecond of every command's start (issue 37; test/commands/hot-command-modules.test.ts).
const stat = promisify(statCallback)

type GrpcModule = typeof import('@grpc/grpc-js')

/** crictl failed at gRPC's 4 MiB default on big nodes (cri-tools#872); lists can be large. */
export const MAX_RECEIVE_MESSAGE_BYTES = 64 * 1024 * 1024
/** HTTP/2's 64 KiB start window made a big listing (8 MB at 10 000 containers) wait a round trip per 64 KiB. */
const FLOW_CONTROL_WINDOW_BYTES = 16 * 1024 * 1024

export interface UnaryLink {
  channel: UnaryChannel
  /** Resolves once connected; rejects with the RuntimeUnreachableError the connect failed with. */
  ready: Promise<void>
}

export interface StreamLink {
  client: InstanceType<GrpcModule['Client']>
  ready: Promise<void>
}

export class ChannelPool {
  private readonly unaries = new Map<string, Promise<UnaryLink>>()
  private readonly streams = new Map<string, Promise<StreamLink>>()

  constructor(
    private readonly connectTimeoutMs: number,
    private readonly trace: (label: string, started: number, status: string) => void,
  ) {}

  unary(endpoint: string): Promise<UnaryLink> {
    return this.remember(this.unaries, endpoint, (forgetMe) => this.openUnary(endpoint, forgetMe))
  }

  stream(endpoint: string): Promise<StreamLink> {
    return this.remember(this.streams, endpoint, () => this.openStream(endpoint))
  }

  close(): void {
    for (const pending of this.unaries.values()) pending.then((link) => link.channel.close()).catch(() => {})
    for (const pending of this.streams.values()) pending.then((link) => link.client.close()).catch(() => {})
    this.unaries.clear()
    this.streams.clear()
  }

  private remember<L extends {ready: Promise<void>}>(
    links: Map<string, Promise<L>>,
    endpoint: string,
    open: (forgetMe: () => void) => Promise<L>,
  ): Promise<L> {
    const known = links.get(endpoint)
    if (known) return known
    const opened: Promise<L> = open(() => this.forget(links, endpoint, opened))
    links.set(endpoint, opened)
    // Forgotten if it never connects: a caller that keeps asking (ui, a supervisor) reaches a runtime that comes back.
    opened.then((link) => link.ready).catch(() => this.forget(links, endpoint, opened))
    return opened
  }

  private forget<L>(links: Map<string, Promise<L>>, endpoint: string, link: Promise<L>): void {
    if (links.get(endpoint) === link) links.delete(endpoint)
  }

  private async openUnary(endpoint: string, forgetMe: () => void): Promise<UnaryLink> {
    const started = monotonicMs()
    await checkSocket(endpoint)
    const channel = new UnaryChannel({
      socketPath: socketPath(endpoint),
      connectTimeoutMs: clampTimerMs(this.connectTimeoutMs),
      windowBytes: FLOW_CONTROL_WINDOW_BYTES,
      // A runtime that restarted closed or GOAWAY'd this session: the next call opens a new one.
      onGone: forgetMe,
    })
    return {channel, ready: this.settleConnect(endpoint, started, channel.connected, () => channel.close())}
  }

  private async openStream(endpoint: string): Promise<StreamLink> {
    const started = monotonicMs()
    await checkSocket(endpoint)
    const [grpc, {waitConnected}] = await Promise.all([import('@grpc/grpc-js'), import('./connectivity.js')])
    const client = new grpc.Client(endpoint, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_RECEIVE_MESSAGE_BYTES,
      'grpc.default_authority': 'localhost',
      // No background retries or keepalive pings that would hold the process open.
      'grpc.enable_retries': 0,
      'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW_BYTES,
    })
    const connected = waitConnected(grpc, client, Date.now() + clampTimerMs(this.connectTimeoutMs))
    return {client, ready: this.settleConnect(endpoint, started, connected, () => client.close())}
  }

  /** READY resolves; anything else closes the connection and rejects with the error a user can act on. */
  private settleConnect(endpoint: string, started: number, connected: Promise<ConnectOutcome>, close: () => void): Promise<void> {
    const ready = connected.then((outcome) => {
      this.trace(`connect ${endpoint}`, started, outcome === 'READY' ? 'OK' : outcome)
      if (outcome === 'READY') return
      close()
      throw unreachable(endpoint, outcome, this.connectTimeoutMs)
    })
    // Calls and connect() observe it; never an unhandled rejection of its own.
    ready.catch(() => {})
    return ready
  }
}

function unreachable(endpoint: string, outcome: 'REFUSED' | 'TIMEOUT', connectTimeoutMs: number): RuntimeUnreachableError {
  return new RuntimeUnreachableError(
    outcome === 'REFUSED'
      ? `runtime at ${endpoint} refused the connection (stale socket?); check that the runtime is running`
      : `runtime at ${endpoint} did not accept a connection within ${formatMs(connectTimeoutMs)}; ` +
          'check that it is running and healthy (--connect-timeout to wait longer)',
  )
}

/** A missing socket is the common mistake; say so at once instead of waiting for a timeout. */
async function checkSocket(endpoint: string): Promise<void> {
  const path = socketPath(endpoint)
  try {
    const info = await stat(path)
    if (!info.isSocket()) throw new RuntimeUnreachableError(`${path} is not a socket; point --runtime-endpoint at the runtime's socket`)
  } catch (error) {
    if (error instanceof RuntimeUnreachableError) throw error
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no socket at' : code === 'EACCES' ? 'permission denied on' : `cannot use (${code})`
    throw new RuntimeUnreachableError(
      `${why} ${path}: is the runtime running? ` +
        'Set --runtime-endpoint, CONTAINER_RUNTIME_ENDPOINT or runtime-endpoint in /etc/crictl.yaml',
    )
  }
}
