import {DeadlineExceededError, fromGrpcError, type GrpcFailure, UnimplementedError} from '../errors.js'
import type * as api from '../../generated/runtime/v1/api.js'
import {clampTimerMs} from '../util/duration.js'
import {monotonicMs} from '../util/time.js'
import type {StateCounts} from './count-states.js'
import type {ContainerKindKeys, GroupCount} from './current-containers.js'
import type {ContainerListing, MethodDef} from './decoders.js'
import {ChannelPool, MAX_RECEIVE_MESSAGE_BYTES} from './channels.js'
import {GrpcStatusError, Status, statusName} from './grpc-status.js'

export {MAX_RECEIVE_MESSAGE_BYTES} from './channels.js'

/** The CRI version podctl speaks, sent in VersionRequest as the kubelet does. */
export const CRI_CLIENT_VERSION = '0.1.0'

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

interface Modules {
  api: ApiModule
  decoders: typeof import('./decoders.js')
}

let modules: Promise<Modules> | undefined

/** The generated code is the heaviest import; only commands that call the runtime load it (grpc-js only streams do). */
function loadModules(): Promise<Modules> {
  modules ??= Promise.all([import('../../generated/runtime/v1/api.js'), import('./decoders.js')]).then(([api, decoders]) => ({
    api,
    decoders,
  }))
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
  private channels: ChannelPool

  constructor(options: ClientOptions) {
    this.runtimeEndpoint = options.runtimeEndpoint
    this.imageEndpoint = options.imageEndpoint ?? options.runtimeEndpoint
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS
    this.commandDeadline = options.commandDeadline
    this.commandTimeoutMs = options.commandTimeoutMs
    this.debug = options.debug
    this.channels = new ChannelPool(this.connectTimeoutMs, (label, started, status) => this.trace(label, started, status))
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
    const [{api}, grpc] = await Promise.all([loadModules(), import('@grpc/grpc-js')])
    const def = (api.RuntimeServiceService as unknown as Record<string, MethodDef>)[method]
    const rpcName = def.path.slice(def.path.lastIndexOf('/') + 1)
    // GetContainerEvents takes a GetEventsRequest: the request type is not always named after the RPC.
    const types = api as unknown as Record<string, {fromPartial(v: unknown): unknown} | undefined>
    const requestType = types[`${rpcName}Request`] ?? types[`${rpcName.replace(/^GetContainer/, 'Get')}Request`]
    const {signal} = options
    const channel = await this.channels.stream(this.runtimeEndpoint)
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
        this.trace(`RuntimeService/${rpcName}`, started, statusName(status.code))
        if (signal?.aborted || status.code === grpc.status.OK) resolve()
        else reject(fromGrpcError(status, {method: `RuntimeService/${rpcName}`, endpoint: this.runtimeEndpoint, timeoutMs: 0}))
      })
      options.onOpen?.()
    })
  }

  /** Waits until the runtime (or the given, e.g. the image) channel is connected, bounded by the connect timeout. */
  async connect(endpoint: string = this.runtimeEndpoint): Promise<void> {
    await (
      await this.channels.unary(endpoint)
    ).ready
  }

  close(): void {
    this.channels.close()
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
    const {api, decoders} = await loadModules()
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
    const link = await this.channels.unary(endpoint)
    const message = (def.requestSerialize as (v: unknown) => Buffer)(requestType.fromPartial(request))
    // Sent while the connection is still being set up; if the connection fails, so does the call.
    try {
      const bytes = await link.channel.call({
        path: def.path,
        message,
        timeoutMs,
        signal: options.signal,
        maxMessageBytes: MAX_RECEIVE_MESSAGE_BYTES,
      })
      const response = decodeResponse(decode ?? decoders.responseDecoder(api, rpcName, def), bytes)
      this.trace(label, started, 'OK')
      return response
    } catch (error) {
      // A call that failed before the channel was up reports why the channel is not up.
      await link.ready
      const failure = error as GrpcStatusError
      this.trace(label, started, statusName(failure.code))
      throw fromGrpcError(failure, {method: label, endpoint, timeoutMs: reportedMs})
    }
  }

  private trace(label: string, started: number, status: string): void {
    if (!this.debug) return
    this.debug(`${label} ${(monotonicMs() - started).toFixed(1)}ms ${status}`)
  }
}

/** An answer that does not decode is the runtime's fault, reported as grpc-js reported it (INTERNAL). */
function decodeResponse(decode: (buffer: Buffer) => unknown, bytes: Buffer): unknown {
  try {
    return decode(bytes)
  } catch (error) {
    throw new GrpcStatusError(Status.INTERNAL, `Response message parsing error: ${(error as Error).message}`)
  }
}
