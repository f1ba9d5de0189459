/**
 * A handle on one pod the API ran: its containers, status, port-forwards, and kill, which is also
 * its Symbol.asyncDispose, so that `await using pod = ...` kills it however the test ends.
 */
import type {PodSandbox} from '../../generated/runtime/v1/api.js'
import {NotFoundError, RuntimeError} from '../errors.js'
import type {KillPodResult} from '../kubelet/kuberuntime/kill.js'
import {podWorkers} from '../kubelet/workers/pod-workers.js'
import {sandboxesByFullName} from '../kubelet/kuberuntime/sandbox.js'
import type {PodRunResult} from '../kubelet/run/run-result.js'
import {getPodStatus, type PodStatusReport} from '../kubelet/status/pod-status.js'
import {portForwardStream} from '../streaming/runtime-streams.js'
import {Container} from './container.js'
import type {ApiContext} from './context.js'

export interface PortForwardOptions {
  /** Local port to listen on; 0 (the default) picks a free one. */
  localPort?: number
  /** Local address to listen on (default 127.0.0.1). */
  address?: string
}

/** A local port forwarded to the pod's port (kubectl port-forward's protocol through the runtime's streaming server). */
export interface PortForward extends AsyncDisposable {
  readonly address: string
  readonly localPort: number
  readonly remotePort: number
  /**
   * Stops listening and ends the session.
   * @throws nothing
   */
  close(): Promise<void>
}

export interface KillOptions {
  /** Seconds the containers get to stop after SIGTERM; default the pod's terminationGracePeriodSeconds (30). */
  gracePeriodSeconds?: number
  /** No preStop hooks and no grace period: SIGKILL at once. */
  force?: boolean
}

export class Pod implements AsyncDisposable {
  readonly name: string
  readonly namespace: string
  readonly uid: string
  /** The pod's sandbox as the run left it (a restart of the pod makes a new one). */
  readonly sandboxId: string
  /** The pod's IP, when it has one. */
  readonly ip: string | null
  /** With wait: 'completed', the first failing app container's exit code, 0 when all succeeded; else null. */
  readonly exitCode: number | null
  /** Init and app containers, in the manifest's order. */
  readonly containers: readonly Container[]
  private readonly forwards = new Set<PortForward>()
  private killing?: Promise<KillPodResult | undefined>

  /** @internal */
  constructor(
    private readonly context: ApiContext,
    result: PodRunResult,
    private readonly onKilled: (pod: Pod) => void = () => {},
  ) {
    this.name = result.pod
    this.namespace = result.namespace
    this.uid = result.uid
    this.sandboxId = result.sandboxId ?? ''
    this.ip = result.ip
    this.exitCode = result.exitCode
    this.containers = result.containers.map((container) => new Container(context, this, container.name, container.type))
  }

  /**
   * A container by name; without a name, the pod's only app container.
   * @throws NotFoundError when the pod has no such container, or several app containers and no name is given.
   */
  container(name?: string): Container {
    const apps = this.containers.filter((container) => container.type === 'app')
    const found = name === undefined ? (apps.length === 1 ? apps[0] : undefined) : this.containers.find((c) => c.name === name)
    if (found) return found
    const names = this.containers.map((container) => container.name).join(', ')
    if (name === undefined) throw new NotFoundError(`pod ${this.label}: it has several app containers (${names}); name one`)
    throw new NotFoundError(`pod ${this.label} has no container "${name}"; it has ${names}`)
  }

  /**
   * The kubelet's GetPodStatus for the pod: phase, readiness, IP, sandboxes and containers.
   * @throws NotFoundError when the pod was killed; RuntimeUnreachableError, RuntimeError.
   */
  async status(): Promise<PodStatusReport> {
    return getPodStatus(this.context.client, await this.sandboxes())
  }

  /**
   * Listens on a local port and forwards each connection to the pod's remotePort.
   * @throws NotFoundError when the pod was killed; RuntimeError when it does not run; UsageError when the
   * local port cannot be listened on; StreamingUnavailableError when the runtime serves no streams.
   */
  async portForward(remotePort: number, options: PortForwardOptions = {}): Promise<PortForward> {
    const ready = (await this.sandboxes()).find((sandbox) => sandbox.state === 'SANDBOX_READY')
    if (!ready) throw new RuntimeError(`pod ${this.label} is not running; port-forward needs a running pod`)
    const address = options.address ?? '127.0.0.1'
    const ports = [{localPort: options.localPort ?? 0, remotePort}]
    const forwarder = await portForwardStream(this.context.client, ready, ports, {addresses: [address]})
    const [listening] = forwarder.listening
    const ended = forwarder.ended.catch(() => {})
    const close = async () => {
      forwarder.close()
      await ended
      this.forwards.delete(forward)
    }

    const forward: PortForward = {
      address: listening.address,
      localPort: listening.localPort,
      remotePort,
      close,
      [Symbol.asyncDispose]: close,
    }
    this.forwards.add(forward)
    return forward
  }

  /**
   * Kills the pod the kubelet's way (preStop hooks, stop, remove) and removes its directory and logs, as
   * `podctl kill` does. Killing twice is safe; a pod already gone resolves to undefined.
   * @throws PodctlError with the code of the first step the runtime refused (and what was done, in its
   * result); a later kill() tries again. RuntimeUnreachableError when the runtime does not answer.
   */
  kill(options: KillOptions = {}): Promise<KillPodResult | undefined> {
    // A kill that failed may be tried again.
    this.killing ??= this.killOnce(options).catch((error: unknown) => {
      this.killing = undefined
      throw error
    })
    return this.killing
  }

  /**
   * kill(), for `await using pod = ...`.
   * @throws what kill() throws
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill()
  }

  private get label(): string {
    return `${this.namespace}/${this.name}`
  }

  private async killOnce(options: KillOptions): Promise<KillPodResult | undefined> {
    await Promise.all([...this.forwards].map((forward) => forward.close()))
    const {client, podDirRoot, podLogsRoot} = this.context
    const sandboxes = await this.sandboxes().catch((error: unknown) => (error instanceof NotFoundError ? [] : Promise.reject(error)))
    if (sandboxes.length === 0) {
      this.onKilled(this)
      return undefined
    }

    const kill = {...options, forget: true, podDirRoot, podLogsRoot, cleanup: true, requestedBy: 'the library (Pod.kill)'}
    const result = await podWorkers.terminate(client, `${this.name}_${this.namespace}`, sandboxes, kill)
    this.onKilled(this)
    return result
  }

  private async sandboxes(): Promise<PodSandbox[]> {
    const found = (await sandboxesByFullName(this.context.client, [this])).values().next().value
    if (!found || found.length === 0) throw new NotFoundError(`pod ${this.label} not found in the runtime: it was killed`)
    return found
  }
}
