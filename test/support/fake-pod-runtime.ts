/**
 * A recording, stateful CRI runtime in process (over the real wire protocol, through
 * startFakeRuntime): sandboxes and containers live in maps, every RPC is logged in arrival order,
 * and a test can script a failure for the next call of a method. Init containers exit as soon
 * as they start (with initExitCode, default 0), sidecars and app containers keep running, so a pod's
 * lifecycle runs without a real runtime.
 */
import {join} from 'node:path'

import type * as grpc from '@grpc/grpc-js'

import {CriClient} from '../../src/lib/cri/client.js'
import {socketDir, startFakeRuntime, versionHandler} from './fake-runtime.js'

export interface FakeCall {
  method: string
  request: any
  /** Whether the client had cancelled the call by the time the runtime finished it. */
  cancelled?: boolean
}

export interface FakeSandbox {
  id: string
  metadata: {name: string; namespace: string; uid: string; attempt: number}
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY'
  createdAt: string
  labels: Record<string, string>
  annotations: Record<string, string>
  runtimeHandler: string
}

export interface FakeContainer {
  id: string
  podSandboxId: string
  metadata: {name: string; attempt: number}
  image: {image: string}
  imageRef: string
  state: 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED'
  createdAt: string
  startedAt: string
  finishedAt: string
  exitCode: number
  reason: string
  labels: Record<string, string>
  annotations: Record<string, string>
  mounts: Array<{containerPath: string; hostPath: string}>
  /** Epoch ms: until then the container is "starting" and cannot be stopped or removed (containerd after a cancelled start). */
  busyUntil?: number
  /** What ContainerStatus reports as its log file (absolute, as containerd reports it). */
  logPath?: string
}

export interface FakeImage {
  id: string
  repoTags: string[]
  repoDigests: string[]
  size: string
  pinned: boolean
}

interface Hold {
  arrived: () => void
  released: Promise<void>
}

type Failure = {code: grpc.status; details: string}

const POD_IP = '10.88.0.9'

class BusyError extends Error {}
class UnimplementedAnswer extends Error {}

export class FakePodRuntime {
  readonly calls: FakeCall[] = []
  readonly sandboxes = new Map<string, FakeSandbox>()
  readonly containers = new Map<string, FakeContainer>()
  readonly images = new Map<string, FakeImage>()
  /** ImageFsInfo's mountpoint: a real directory, since podctl measures its filesystem (statfs). */
  imageFsMountpoint = '/'
  client!: CriClient
  /** The exit code of every init container, the moment it starts. */
  initExitCode = 0
  /** The exit code of every app container the moment it starts (a crash at start); undefined: it runs until stopped. */
  appExitCode: number | undefined
  /** What ExecSync answers (hooks, exec probes); default exit 0 with no output. */
  execSyncAnswer: (request: {containerId: string; cmd: string[]; timeout: string}) => {stdout: Buffer; stderr: Buffer; exitCode: number} =
    () => ({stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0})
  /** Per method, what its next calls get: a failure, or undefined for the usual answer. */
  private readonly failures = new Map<string, Array<Failure | undefined>>()
  private readonly holds = new Map<string, Hold[]>()
  /** How long a container stays "starting" when its StartContainer call was cancelled by the client. */
  cancelledStartBusyMs = 0
  /**
   * GetContainerEvents: 'unimplemented' answers UNIMPLEMENTED (containerd 1.6, the default); 'stream'
   * keeps each call open, sending what pushEvent() sends until breakEventStreams() or the client ends it.
   */
  containerEvents: 'unimplemented' | 'stream' | 'ended' = 'unimplemented'
  /**
   * What Version answers; undefined answers the fake's own name (fake-runtime.ts's versionHandler). CRI-O 1.26-like runtimes
   * (`{runtimeName: 'cri-o', runtimeVersion: '1.26.4'}`) are the ones that split their events.
   */
  version?: {runtimeName: string; runtimeVersion: string}
  private readonly eventStreams = new Set<grpc.ServerWritableStream<any, any>>()
  private stop?: () => Promise<void>
  private counter = 0

  async start(): Promise<this> {
    const path = join(socketDir(), 'cri.sock')
    this.stop = await startFakeRuntime(path, this.runtimeHandlers() as never, this.imageHandlers() as never)
    this.client = new CriClient({runtimeEndpoint: `unix://${path}`, callTimeoutMs: 5000})
    return this
  }

  async close(): Promise<void> {
    for (const stream of this.eventStreams) stream.end()
    this.eventStreams.clear()
    this.client.close()
    await this.stop?.()
  }

  reset(): void {
    this.calls.length = 0
    this.sandboxes.clear()
    this.containers.clear()
    this.images.clear()
    this.imageFsMountpoint = '/'
    this.failures.clear()
    this.holds.clear()
    this.cancelledStartBusyMs = 0
    this.initExitCode = 0
    this.appExitCode = undefined
    this.containerEvents = 'unimplemented'
    this.version = undefined
    for (const stream of this.eventStreams) stream.end()
    this.eventStreams.clear()
    this.execSyncAnswer = () => ({stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0})
  }

  /**
   * The next call of `method` is held in flight: `arrived` resolves when it reaches the runtime, and
   * the runtime does its work (and answers, if the caller still listens) only on release().
   */
  holdNext(method: string): {arrived: Promise<void>; release: () => void} {
    let arrived!: () => void
    let release!: () => void
    const arrivedPromise = new Promise<void>((resolve) => {
      arrived = resolve
    })
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    this.holds.set(method, [...(this.holds.get(method) ?? []), {arrived, released}])
    return {arrived: arrivedPromise, release}
  }

  /** The next call of `method` answers with this gRPC failure. */
  failNext(method: string, code: grpc.status, details: string): void {
    this.failAfter(method, 0, code, details)
  }

  /** The call of `method` after the next `answered` ones (which answer as usual) fails with this gRPC failure. */
  failAfter(method: string, answered: number, code: grpc.status, details: string): void {
    const answers: Array<Failure | undefined> = Array.from({length: answered}, () => undefined)
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...answers, {code, details}])
  }

  /** Sends a ContainerEventResponse to every open GetContainerEvents stream; returns how many got it. */
  pushEvent(event: {containerId: string; containerEventType: string; podSandboxStatus?: unknown}): number {
    for (const stream of this.eventStreams) stream.write({createdAt: this.now(), containersStatuses: [], ...event})
    return this.eventStreams.size
  }

  /** Every open GetContainerEvents stream fails with this status (a runtime dropping its streams). */
  breakEventStreams(code: grpc.status, details: string): void {
    for (const stream of this.eventStreams) stream.emit('error', {code, details, name: 'Error', message: details})
    this.eventStreams.clear()
  }

  /** How many GetContainerEvents streams are open now. */
  openEventStreams(): number {
    return this.eventStreams.size
  }

  methods(): string[] {
    return this.calls.map((call) => call.method)
  }

  /** A sandbox that already exists (an earlier run of the pod), with the kubelet's labels and `annotations` as its maker wrote them. */
  addSandbox(metadata: FakeSandbox['metadata'], annotations: Record<string, string> = {}): FakeSandbox {
    const sandbox: FakeSandbox = {
      id: this.newId('sb'),
      metadata,
      state: 'SANDBOX_READY',
      createdAt: this.now(),
      labels: {
        'io.kubernetes.pod.name': metadata.name,
        'io.kubernetes.pod.namespace': metadata.namespace,
        'io.kubernetes.pod.uid': metadata.uid,
      },
      annotations: {...annotations},
      runtimeHandler: '',
    }
    this.sandboxes.set(sandbox.id, sandbox)
    return sandbox
  }

  private newId(prefix: string): string {
    return `${prefix}${String(++this.counter).padStart(4, '0')}${'0'.repeat(58)}`
  }

  /** Strictly increasing nanosecond timestamps, so newest-first orders are deterministic. */
  private now(): string {
    return String(BigInt(Date.now()) * 1_000_000n + BigInt(++this.counter))
  }

  private handler(method: string, answer: (request: any) => unknown): grpc.handleUnaryCall<any, any> {
    return async (call, callback) => {
      const record: FakeCall = {method, request: call.request}
      this.calls.push(record)
      // A container being started cannot be stopped or removed; after a start the client cancelled
      // it stays "starting" a while longer (containerd).
      const starting = method === 'startContainer' ? this.containers.get(call.request.containerId) : undefined
      if (starting) starting.busyUntil = Number.POSITIVE_INFINITY
      const hold = this.holds.get(method)?.shift()
      if (hold) {
        hold.arrived()
        await hold.released
      }

      record.cancelled = call.cancelled
      if (starting) starting.busyUntil = call.cancelled ? Date.now() + this.cancelledStartBusyMs : undefined

      const failure = this.failures.get(method)?.shift()
      if (failure) return callback({code: failure.code, details: failure.details, name: 'Error', message: failure.details}, null)
      try {
        callback(null, answer(call.request))
      } catch (error) {
        // A missing object is NotFound; a container still starting is the runtime's generic failure (Unknown).
        const code = (error instanceof BusyError ? 2 : error instanceof UnimplementedAnswer ? 12 : 5) as grpc.status
        callback({code, details: (error as Error).message, name: 'Error', message: (error as Error).message}, null)
      }
    }
  }

  /** An ID or a unique prefix of one, as containerd resolves them (its truncindex). */
  private resolve<T>(map: Map<string, T>, id: string, what: string): T {
    const exact = map.get(id)
    if (exact) return exact
    const matches = id === '' ? [] : [...map.keys()].filter((key) => key.startsWith(id))
    if (matches.length !== 1) throw new Error(`${what} ${id} not found`)
    return map.get(matches[0])!
  }

  private sandbox(id: string): FakeSandbox {
    return this.resolve(this.sandboxes, id, 'sandbox')
  }

  private container(id: string): FakeContainer {
    return this.resolve(this.containers, id, 'container')
  }

  private runtimeHandlers(): Record<string, grpc.handleUnaryCall<any, any> | grpc.handleServerStreamingCall<any, any>> {
    const matches = (labels: Record<string, string>, selector: Record<string, string> = {}) =>
      Object.entries(selector).every(([key, value]) => labels[key] === value)
    return {
      // Not logged: crictl checks the connection with Version before each command; podctl's own calls are what tests follow.
      version: (call, callback) =>
        this.version ? callback(null, {version: '0.1.0', runtimeApiVersion: 'v1', ...this.version}) : versionHandler(call, callback),
      runPodSandbox: this.handler('runPodSandbox', ({config, runtimeHandler}) => {
        const sandbox: FakeSandbox = {
          id: this.newId('sb'),
          metadata: config.metadata,
          state: 'SANDBOX_READY',
          createdAt: this.now(),
          labels: config.labels,
          annotations: config.annotations,
          runtimeHandler,
        }
        this.sandboxes.set(sandbox.id, sandbox)
        return {podSandboxId: sandbox.id}
      }),
      podSandboxStatus: this.handler('podSandboxStatus', ({podSandboxId}) => ({
        status: {...this.sandbox(podSandboxId), network: {ip: POD_IP, additionalIps: []}},
      })),
      listPodSandbox: this.handler('listPodSandbox', ({filter}) => ({
        items: [...this.sandboxes.values()].filter(
          (sandbox) =>
            (!filter?.id || sandbox.id.startsWith(filter.id)) &&
            (!filter?.state || sandbox.state === filter.state.state) &&
            matches(sandbox.labels, filter?.labelSelector),
        ),
      })),
      stopPodSandbox: this.handler('stopPodSandbox', (request) => {
        const podSandboxId = this.sandbox(request.podSandboxId).id
        this.sandbox(podSandboxId).state = 'SANDBOX_NOTREADY'
        for (const container of this.containers.values()) if (container.podSandboxId === podSandboxId) this.exit(container, 137)
        return {}
      }),
      removePodSandbox: this.handler('removePodSandbox', (request) => {
        const podSandboxId = this.sandboxes.has(request.podSandboxId) ? request.podSandboxId : this.sandbox(request.podSandboxId).id
        // The CRI: removing a sandbox forcibly removes its containers (a starting one refuses).
        const inside = [...this.containers.values()].filter((container) => container.podSandboxId === podSandboxId)
        for (const container of inside) this.busyCheck(container)
        for (const container of inside) this.containers.delete(container.id)
        this.sandboxes.delete(podSandboxId)
        return {}
      }),
      createContainer: this.handler('createContainer', ({podSandboxId, config}) => {
        this.sandbox(podSandboxId)
        const container: FakeContainer = {
          id: this.newId('c'),
          podSandboxId,
          metadata: config.metadata,
          image: {image: config.image.image},
          imageRef: config.image.image,
          state: 'CONTAINER_CREATED',
          createdAt: this.now(),
          startedAt: '0',
          finishedAt: '0',
          exitCode: 0,
          reason: '',
          labels: config.labels,
          annotations: config.annotations,
          mounts: config.mounts,
        }
        this.containers.set(container.id, container)
        return {containerId: container.id}
      }),
      startContainer: this.handler('startContainer', ({containerId}) => {
        const container = this.container(containerId)
        container.state = 'CONTAINER_RUNNING'
        container.startedAt = this.now()
        // A sidecar (io.podctl.sidecar) is an init container that keeps running.
        const sidecar = container.annotations['io.podctl.sidecar'] !== undefined
        const type = container.annotations['io.podctl.containerType']
        if (type === 'init' && !sidecar) this.exit(container, this.initExitCode)
        if (type !== 'init' && this.appExitCode !== undefined) this.exit(container, this.appExitCode)
        return {}
      }),
      stopContainer: this.handler('stopContainer', ({containerId}) => {
        this.exit(this.busyCheck(this.container(containerId)), 137)
        return {}
      }),
      removeContainer: this.handler('removeContainer', (request) => {
        const found = [...this.containers.keys()].filter((id) => id.startsWith(request.containerId))
        const containerId = this.containers.has(request.containerId) || found.length !== 1 ? request.containerId : found[0]
        if (this.containers.has(containerId)) this.busyCheck(this.container(containerId))
        this.containers.delete(containerId)
        return {}
      }),
      listContainers: this.handler('listContainers', ({filter}) => ({
        containers: [...this.containers.values()].filter(
          (container) =>
            (!filter?.id || container.id.startsWith(filter.id)) &&
            (!filter?.podSandboxId || container.podSandboxId.startsWith(filter.podSandboxId)) &&
            (!filter?.state || container.state === filter.state.state) &&
            matches(container.labels, filter?.labelSelector),
        ),
      })),
      containerStatus: this.handler('containerStatus', ({containerId}) => ({status: this.container(containerId)})),
      execSync: this.handler('execSync', (request) => this.execSyncAnswer(request)),
      status: this.handler('status', () => ({
        status: {
          conditions: [
            {type: 'RuntimeReady', status: true},
            {type: 'NetworkReady', status: true},
          ],
        },
        info: {},
      })),
      listContainerStats: this.handler('listContainerStats', () => ({stats: [...this.containers.values()].map((c) => this.statsOf(c))})),
      getContainerEvents: (call: grpc.ServerWritableStream<any, any>) => {
        this.calls.push({method: 'getContainerEvents', request: call.request})
        // CRI-O without enable_pod_events: the stream ends at once, with no event and no error.
        if (this.containerEvents === 'ended') {
          call.end()
          return
        }

        if (this.containerEvents === 'unimplemented') {
          const details = 'unknown method GetContainerEvents for service runtime.v1.RuntimeService'
          call.emit('error', {code: 12, details, name: 'Error', message: details})
          return
        }

        this.eventStreams.add(call)
        call.on('cancelled', () => this.eventStreams.delete(call))
      },
      updateContainerResources: this.handler('updateContainerResources', ({containerId}) => {
        this.container(containerId)
        return {}
      }),
    }
  }

  private imageHandlers(): Record<string, grpc.handleUnaryCall<any, any>> {
    return {
      imageStatus: this.handler('imageStatus', ({image}) => ({image: {id: image.image, repoTags: [], repoDigests: [], size: '1'}})),
      listImages: this.handler('listImages', () => ({images: [...this.images.values()]})),
      removeImage: this.handler('removeImage', ({image}) => {
        if (!this.images.delete(image.image)) throw new Error(`image ${image.image} not found`)
        return {}
      }),
      imageFsInfo: this.handler('imageFsInfo', () => ({
        imageFilesystems: [
          {timestamp: this.now(), fsId: {mountpoint: this.imageFsMountpoint}, usedBytes: {value: '0'}, inodesUsed: {value: '0'}},
        ],
        containerFilesystems: [],
      })),
    }
  }

  /** A running container uses a tenth of a core since it started, and 4 MiB; an exited one its last figures. */
  private statsOf(container: FakeContainer): unknown {
    const now = BigInt(Date.now()) * 1_000_000n
    const started = BigInt(container.startedAt)
    const until = container.state === 'CONTAINER_RUNNING' ? now : BigInt(container.finishedAt)
    const used = started > 0n && until > started ? (until - started) / 10n : 0n
    return {
      attributes: {id: container.id, metadata: container.metadata, labels: container.labels, annotations: container.annotations},
      cpu: {timestamp: String(now), usageCoreNanoSeconds: {value: String(used)}},
      memory: {timestamp: String(now), workingSetBytes: {value: String(4 * 1024 * 1024)}},
    }
  }

  private busyCheck(container: FakeContainer): FakeContainer {
    if ((container.busyUntil ?? 0) > Date.now()) throw new BusyError(`container ${container.id} is in starting state, try again`)
    return container
  }

  private exit(container: FakeContainer, exitCode: number): void {
    if (container.state === 'CONTAINER_EXITED') return
    container.state = 'CONTAINER_EXITED'
    container.finishedAt = this.now()
    container.exitCode = exitCode
    container.reason = exitCode === 0 ? 'Completed' : 'Error'
  }
}
