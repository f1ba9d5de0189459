import {stat} from 'node:fs/promises'

import {DeadlineExceededError, formatMs, fromGrpcError, type GrpcFailure, RuntimeUnreachableError, UnimplementedError} from '../errors.js'
import type * as api from '../../generated/runtime/v1/api.js'
import {clampTimerMs} from '../util/duration.js'
import {monotonicMs} from '../util/time.js'
import type {StateCounts} from './count-states.js'
import type {ContainerKindKeys, GroupCount} from './current-containers.js'
import type {ContainerListing, MethodDef} from './decoders.js'
import {waitConnected} from './connectivity.js'
import {socketPath} from './endpoint.js'

/** The CRI version podctl speaks, sent in VersionRequest as the kubelet does. */
export const CRI_CLIENT_VERSION = '0.1.0'

type GrpcModule = typeof import('@grpc/grpc-js')
type ApiModule = typeof import('../../generated/runtime/v1/api.js')
type RuntimeDef = typeof api.RuntimeServiceService
type ImageDef = typeof api.ImageServiceService

type RequestOf<D, K extends keyof D> = D[K] extends {requestSerialize: (value: infer R) => Buffer} ? R : never
type ResponseOf<D, K extends keyof D> = D[K] extends {responseDeserialize: (value: Buffer) => infer R} ? R : never

export type RuntimeMethod = keyof RuntimeDef
export type ImageMethod = keyof ImageDef
export type RuntimeRequest<M extends RuntimeMethod> = api.DeepPartial<RequestOf<RuntimeDef, M>>
export type RuntimeResponse<M extends RuntimeMethod> = ResponseOf<RuntimeDef, M>
export type ImageRequest<M extends ImageMethod> = api.DeepPartial<RequestOf<ImageDef, M>>
export type ImageResponse<M extends ImageMethod> = ResponseOf<ImageDef, M>

/** crictl failed at gRPC's 4 MiB default on big nodes (cri-tools#872); lists can be large. */
export const MAX_RECEIVE_MESSAGE_BYTES = 64 * 1024 * 1024
export const DEFAULT_CONNECT_TIMEOUT_MS = 2000
export const DEFAULT_CALL_TIMEOUT_MS = 10_000

/**
 * Calls that legitimately take long get at least these deadlines whatever --timeout says, so a
 * short --timeout meant for listing never kills a sandbox start half-way (crictl's #984).
 */
const SLOW_CALL_FLOOR_MS: Partial<Record<string, number>> = {
  runPodSandbox: 4 * 60_000,
  stopPodSandbox: 2 * 60_000,
  removePodSandbox: 2 * 60_000,
  stopContainer: 2 * 60_000,
  createContainer: 2 * 60_000,
  startContainer: 2 * 60_000,
  pullImage: 15 * 60_000,
  // CRIU freezes the container and writes its memory out: the kubelet allows its runtime request timeout.
  checkpointContainer: 2 * 60_000,
}

export interface ClientOptions {
  runtimeEndpoint: string
  /** Defaults to the runtime endpoint; the same endpoint shares one connection. */
  imageEndpoint?: string
  connectTimeoutMs?: number
  callTimeoutMs?: number
  /**
   * Epoch ms: the whole command's upper bound (the user's --timeout). No call's deadline reaches past
   * it, whatever its floor, except calls that clean up what the command created (`cleanup`).
   */
  commandDeadline?: number
  /** The --timeout behind commandDeadline, named in the error when the command deadline cut a call short. */
  commandTimeoutMs?: number
  /** Receives one line per RPC: method, duration, status. Never request bodies (they may hold credentials). */
  debug?: (line: string) => void
}

export interface CallOptions {
  /** Overrides the deadline of this call (ms). */
  timeoutMs?: number
  signal?: AbortSignal
  /** Rollback and cleanup: may outlive the command deadline (bounded by its own timeoutMs). */
  cleanup?: boolean
}

interface Channel {
  endpoint: string
  client: InstanceType<GrpcModule['Client']>
  /** Resolves once connected; rejects with the RuntimeUnreachableError the connect failed with. */
  ready: Promise<void>
}

interface Modules {
  grpc: GrpcModule
  api: ApiModule
  decoders: typeof import('./decoders.js')
}

let modules: Promise<Modules> | undefined

/** grpc-js and the generated code are the heaviest imports; only commands that call the runtime load them. */
function loadModules(): Promise<Modules> {
  modules ??= Promise.all([import('@grpc/grpc-js'), import('../../generated/runtime/v1/api.js'), import('./decoders.js')]).then(
    ([grpc, api, decoders]) => ({grpc, api, decoders}),
  )
  return modules
}

/**
 * The one CRI transport every command shares: unix-socket channels with a connect timeout, a
 * deadline on every call, typed requests and responses, and gRPC failures turned into PodctlErrors.
 */
export class CriClient {
  readonly runtimeEndpoint: string
  readonly imageEndpoint: string
  readonly connectTimeoutMs: number
  readonly callTimeoutMs: number
  readonly commandDeadline?: number
  private readonly commandTimeoutMs?: number
  private readonly debug?: (line: string) => void
  private channels = new Map<string, Promise<Channel>>()

  constructor(options: ClientOptions) {
    this.runtimeEndpoint = options.runtimeEndpoint
    this.imageEndpoint = options.imageEndpoint ?? options.runtimeEndpoint
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS
    this.commandDeadline = options.commandDeadline
    this.commandTimeoutMs = options.commandTimeoutMs
    this.debug = options.debug
  }

  /**
   * The same connections without the command deadline, for work that outlives --timeout by design
   * (run --supervise: --timeout bounds the start; supervision lasts until Ctrl-C, each call with its own deadline).
   */
  withoutCommandDeadline(): CriClient {
    const {runtimeEndpoint, imageEndpoint, connectTimeoutMs, callTimeoutMs, debug} = this
    const client = new CriClient({runtimeEndpoint, imageEndpoint, connectTimeoutMs, callTimeoutMs, debug})
    client.channels = this.channels
    return client
  }

  runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, options?: CallOptions): Promise<RuntimeResponse<M>> {
    return this.call('RuntimeService', this.runtimeEndpoint, method, request, options) as Promise<RuntimeResponse<M>>
  }

  image<M extends ImageMethod>(method: M, request: ImageRequest<M>, options?: CallOptions): Promise<ImageResponse<M>> {
    return this.call('ImageService', this.imageEndpoint, method, request, options) as Promise<ImageResponse<M>>
  }

  /** ListPodSandbox or ListContainers counted by state (count-states.ts), not decoded: summaries need no item's details. */
  async countRuntime(method: 'listContainers' | 'listPodSandbox', request: RuntimeRequest<typeof method>): Promise<StateCounts> {
    const {api, decoders} = await loadModules()
    const count = decoders.stateCounter(api, method)
    return this.call('RuntimeService', this.runtimeEndpoint, method, request, {}, count) as Promise<StateCounts>
  }

  /** ListContainers read into columns for a table (container-columns.ts), with those labels; its summaries decoded only if asked for. */
  async listContainerColumns(request: RuntimeRequest<'listContainers'>, labelKeys: readonly string[]): Promise<ContainerListing> {
    const {api, decoders} = await loadModules()
    const read = (bytes: Buffer) => decoders.containerListing(api, bytes, labelKeys)
    return this.call('RuntimeService', this.runtimeEndpoint, 'listContainers', request, {}, read) as Promise<ContainerListing>
  }

  /** ListPodSandbox or ListContainers decoded for a table or names: annotations (and a sandbox's labels) skipped unread. */
  async listSummaries<M extends 'listContainers' | 'listPodSandbox'>(method: M, request: RuntimeRequest<M>): Promise<RuntimeResponse<M>> {
    const {api, decoders} = await loadModules()
    const decode = decoders.summaryDecoder(api, method)
    return this.call('RuntimeService', this.runtimeEndpoint, method, request, {}, decode) as Promise<RuntimeResponse<M>>
  }

  /** ListContainers counted by sandbox, not decoded: each pod's current containers and those running (current-containers.ts). */
  async countContainersBySandbox(request: RuntimeRequest<'listContainers'>, keys: ContainerKindKeys): Promise<Map<string, GroupCount>> {
    const {api, decoders} = await loadModules()
    const decode = decoders.runningBySandboxCounter(api, keys)
    return this.call('RuntimeService', this.runtimeEndpoint, 'listContainers', request, {}, decode) as Promise<Map<string, GroupCount>>
  }

  /** How many images ListImages answers, without decoding them. */
  async countImages(request: ImageRequest<'listImages'>): Promise<number> {
    const {decoders} = await loadModules()
    return this.call('ImageService', this.imageEndpoint, 'listImages', request, {}, decoders.itemCounter) as Promise<number>
  }

  /** Like runtime(), but resolves undefined when the runtime answers UNIMPLEMENTED (older runtimes). */
  async runtimeOptional<M extends RuntimeMethod>(
    method: M,
    request: RuntimeRequest<M>,
    options?: CallOptions,
  ): Promise<RuntimeResponse<M> | undefined> {
    try {
      return await this.runtime(method, request, options)
    } catch (error) {
      if (error instanceof UnimplementedError) return undefined
      throw error
    }
  }

  /**
   * A server-streaming runtime call (GetContainerEvents): each message goes to `onMessage` until the
   * runtime ends the stream (resolves), the call fails (rejects with the PodctlError, UNIMPLEMENTED as
   * UnimplementedError) or `signal` aborts (resolves). Connecting is bounded by the connect timeout,
   * but the stream itself has no deadline, the one exception to "every call has a deadline": a
   * watch lasts until it is stopped, and a caller must never wait on it for progress (the
   * supervisor keeps listing while it is open). `onOpen` is told once the call is sent on a
   * connected channel (containerd sends no header until its first event, so nothing earlier says
   * the stream is up). --debug gets one line when the stream ends: method, duration, status.
   */
  async runtimeStream<M extends RuntimeMethod>(
    method: M,
    request: RuntimeRequest<M>,
    onMessage: (message: RuntimeResponse<M>) => void,
    options: {signal?: AbortSignal; onOpen?: () => void} = {},
  ): Promise<void> {
    const {grpc, api} = await loadModules()
    const def = (api.RuntimeServiceService as unknown as Record<string, MethodDef>)[method]
    const rpcName = def.path.slice(def.path.lastIndexOf('/') + 1)
    // GetContainerEvents takes a GetEventsRequest: the request type is not always named after the RPC.
    const types = api as unknown as Record<string, {fromPartial(v: unknown): unknown} | undefined>
    const requestType = types[`${rpcName}Request`] ?? types[`${rpcName.replace(/^GetContainer/, 'Get')}Request`]
    const {signal} = options
    const channel = await this.channel(this.runtimeEndpoint)
    await channel.ready
    // Aborted while connecting: an abort listener added now would never fire, and the stream would never end.
    if (signal?.aborted) return
    const started = monotonicMs()
    await new Promise<void>((resolve, reject) => {
      const call = channel.client.makeServerStreamRequest(
        def.path,
        (value: unknown) => (def.requestSerialize as (v: unknown) => Buffer)(requestType ? requestType.fromPartial(value) : value),
        def.responseDeserialize,
        request,
        new grpc.Metadata(),
        {},
      )
      const onAbort = () => call.cancel()
      signal?.addEventListener('abort', onAbort, {once: true})
      call.on('data', (message: RuntimeResponse<M>) => onMessage(message))
      // grpc-js ends a failed stream with 'error' and then 'end'; 'status' comes once, whatever the outcome.
      call.on('error', () => {})
      call.on('status', (status: GrpcFailure & {code: number}) => {
        signal?.removeEventListener('abort', onAbort)
        this.trace(`RuntimeService/${rpcName}`, started, grpcCodeName(grpc, status.code))
        if (signal?.aborted || status.code === grpc.status.OK) resolve()
        else reject(fromGrpcError(status, {method: `RuntimeService/${rpcName}`, endpoint: this.runtimeEndpoint, timeoutMs: 0}))
      })
      options.onOpen?.()
    })
  }

  /** Waits until the runtime (or the given, e.g. the image) channel is connected, bounded by the connect timeout. */
  async connect(endpoint: string = this.runtimeEndpoint): Promise<void> {
    await (
      await this.channel(endpoint)
    ).ready
  }

  close(): void {
    for (const pending of this.channels.values()) {
      pending.then((channel) => channel.client.close()).catch(() => {})
    }

    this.channels.clear()
  }

  /** The deadline (ms from now) of one call: its override or the default with its floor, within the command deadline. */
  deadlineFor(method: string, override?: number, cleanup = false): number {
    const wanted = override ?? Math.max(this.callTimeoutMs, SLOW_CALL_FLOOR_MS[method] ?? 0)
    const left = cleanup || this.commandDeadline === undefined ? Infinity : this.commandDeadline - Date.now()
    // Clamped: grpc-js arms a timer per deadline, and one past setTimeout's ceiling fires at once.
    return Math.max(0, clampTimerMs(Math.min(wanted, left)))
  }

  private async call(
    service: 'RuntimeService' | 'ImageService',
    endpoint: string,
    method: string,
    request: unknown,
    options: CallOptions = {},
    decode?: (buffer: Buffer) => unknown,
  ): Promise<unknown> {
    const {grpc, api, decoders} = await loadModules()
    const definition = (service === 'RuntimeService' ? api.RuntimeServiceService : api.ImageServiceService) as unknown as Record<
      string,
      MethodDef
    >
    const def = definition[method]
    const rpcName = def.path.slice(def.path.lastIndexOf('/') + 1)
    const label = `${service}/${rpcName}`
    // Requests are DeepPartial; fromPartial fills proto3 defaults so encode never sees undefined.
    const requestType = (api as unknown as Record<string, {fromPartial(v: unknown): unknown}>)[`${rpcName}Request`]
    const timeoutMs = this.deadlineFor(method, options.timeoutMs, options.cleanup)
    if (timeoutMs === 0) {
      throw new DeadlineExceededError(`--timeout ran out before ${label} could be sent to ${endpoint}`)
    }

    // Cut short by the command deadline: the user's --timeout is what ran out.
    const cutShort = timeoutMs < this.deadlineFor(method, options.timeoutMs, true)
    const reportedMs = cutShort && this.commandTimeoutMs !== undefined ? this.commandTimeoutMs : timeoutMs
    const started = monotonicMs()
    const channel = await this.channel(endpoint)

    // The call is made while the connection is still being set up, as a plain grpc-js client does:
    // grpc-js holds it until the channel is ready and sends it at once. If the connection fails,
    // the call is cancelled and fails with the connect error, exactly as if it had waited.
    return new Promise((resolve, reject) => {
      let connectFailure: unknown
      const call = channel.client.makeUnaryRequest(
        def.path,
        (value: unknown) => (def.requestSerialize as (v: unknown) => Buffer)(requestType.fromPartial(value)),
        decode ?? decoders.responseDecoder(api, rpcName, def),
        request,
        new grpc.Metadata(),
        {deadline: Date.now() + timeoutMs},
        (error: (Error & GrpcFailure) | null, response?: unknown) => {
          options.signal?.removeEventListener('abort', onAbort)
          if (!error) {
            this.trace(label, started, 'OK')
            resolve(response)
            return
          }

          // A call that failed before the channel was up reports why the channel is not up.
          channel.ready.then(
            () => {
              this.trace(label, started, grpcCodeName(grpc, error.code))
              reject(fromGrpcError(error, {method: label, endpoint, timeoutMs: reportedMs}))
            },
            (error_: unknown) => reject(connectFailure ?? error_),
          )
        },
      )
      const onAbort = () => call.cancel()
      options.signal?.addEventListener('abort', onAbort, {once: true})
      channel.ready.catch((error: unknown) => {
        connectFailure = error
        call.cancel()
      })
    })
  }

  private channel(endpoint: string): Promise<Channel> {
    const known = this.channels.get(endpoint)
    if (known) return known
    const opened = this.open(endpoint)
    this.channels.set(endpoint, opened)
    // Forgotten if it never connects: a caller that keeps asking (ui, a supervisor) reaches a runtime that comes back.
    opened.then((channel) => channel.ready).catch(() => this.channels.get(endpoint) === opened && this.channels.delete(endpoint))
    return opened
  }

  private async open(endpoint: string): Promise<Channel> {
    const started = monotonicMs()
    const path = socketPath(endpoint)
    // A missing socket is the common mistake; say so at once instead of waiting for a timeout.
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

    const {grpc} = await loadModules()
    const client = new grpc.Client(endpoint, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_RECEIVE_MESSAGE_BYTES,
      'grpc.default_authority': 'localhost',
      // One shot per command: no background retries or keepalive pings that would hold the process open.
      'grpc.enable_retries': 0,
      // HTTP/2's 64 KiB start window made a big listing (8 MB at 10 000 containers) wait a round trip per 64 KiB.
      'grpc-node.flow_control_window': 16 * 1024 * 1024,
    })
    const ready = waitConnected(grpc, client, Date.now() + clampTimerMs(this.connectTimeoutMs)).then((outcome) => {
      if (outcome !== 'READY') {
        client.close()
        this.trace(`connect ${endpoint}`, started, outcome)
        throw new RuntimeUnreachableError(
          outcome === 'REFUSED'
            ? `runtime at ${endpoint} refused the connection (stale socket?); check that the runtime is running`
            : `runtime at ${endpoint} did not accept a connection within ${formatMs(this.connectTimeoutMs)}; ` +
                'check that it is running and healthy (--connect-timeout to wait longer)',
        )
      }

      this.trace(`connect ${endpoint}`, started, 'OK')
    })
    // Calls and connect() observe it; never an unhandled rejection of its own.
    ready.catch(() => {})
    return {endpoint, client, ready}
  }

  private trace(label: string, started: number, status: string): void {
    if (!this.debug) return
    this.debug(`${label} ${(monotonicMs() - started).toFixed(1)}ms ${status}`)
  }
}

function grpcCodeName(grpc: GrpcModule, code: number | undefined): string {
  if (code === undefined) return 'ERROR'
  return (grpc.status as unknown as Record<number, string>)[code] ?? `CODE_${code}`
}
