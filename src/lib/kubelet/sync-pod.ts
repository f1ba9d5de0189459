import {setMaxListeners} from 'node:events'

import type {CriClient} from '../cri/client.js'
import {AlreadyExistsError, asPodctlError, DeadlineExceededError, formatMs, InterruptedError, NotFoundError, PodctlError} from '../errors.js'
import type {ContainerModel, ContainerType, PodModel} from '../manifest/model.js'
import type {ContainerStatus, PodSandbox} from '../../generated/runtime/v1/api.js'
import {containerObject, restartCountFromLogs, startContainer, type ImageEnsurer} from './container.js'
import {normalEvent, warningEvent, type EventSink} from '../kube/events.js'
import type {EnsureImageResult} from '../images/image-manager.js'
import {killContainer, killPod} from './kill.js'
import {BackOff, CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS, ladderFromEnv} from '../kube/backoff.js'
import {newestFirst, podDescription, podFullName, shortId, stableKey} from '../kube/helpers.js'
import {PodLabel} from '../kube/labels.js'
import {
  createTerminationMessageFile,
  removePodDirectory,
  setUpVolumes,
  volumeHostPaths,
  writeEtcHosts,
} from './pod-dirs.js'
import {createPodSandbox, generatePodSandboxConfig, podHostname, podLogDirectory, type SandboxConfig} from './sandbox.js'
import type {PodPhase} from './pod-phase.js'
import {getPodStatus} from './pod-status.js'
import {initReason, PodFailedError, PodFailureReason} from './reasons.js'

/**
 * `podctl run` for one pod, in the kubelet's order (SyncPod for a new pod): an existing pod is
 * refused or replaced (attempt + 1), volumes are set up, RunPodSandbox, init containers one by one
 * to completion (restarted with the crash back-off per restartPolicy), app containers started in
 * order with their postStart hooks, then the wait the user asked for. Any failure — and an
 * interrupt — rolls the pod back with killPod, so nothing is left half-created, unless
 * keepOnFailure. Image pulls for all containers start as soon as the sandbox exists (bounded by
 * the image manager); creation and start order stay the kubelet's.
 */
export type WaitMode = 'running' | 'completed' | 'none'
export const WAIT_MODES: readonly WaitMode[] = ['running', 'completed', 'none']

export interface PodRunSettings {
  wait: WaitMode
  /** Epoch ms: the overall deadline of the run (--timeout); undefined = none. */
  deadline?: number
  replace: boolean
  keepOnFailure: boolean
  /** --rm: remove the pod once it has completed. */
  remove: boolean
  logsRoot: string
  podDirRoot: string
  /** Overrides spec.runtimeClassName. */
  runtimeHandler?: string
  hostResolvConf: string
  nodeMemoryBytes: number
  auth?: Parameters<ImageEnsurer['ensureImage']>[0]['auth']
  authSource?: string
  restartBackOff?: BackOff
  /** How often container states are polled while waiting (ms). */
  pollMs?: number
}

export interface PodRunDeps {
  client: CriClient
  images: ImageEnsurer
  events: EventSink
  /** Aborted on SIGINT/SIGTERM: stop waiting, roll back. */
  signal: AbortSignal
  /** What the run is doing now (for a spinner). */
  onStep?: (text: string) => void
}

export interface RunContainerResult {
  name: string
  id: string
  type: ContainerType
  state: string
  exitCode: number | null
  attempt: number
  reason: string
}

export interface PodRunResult {
  pod: string
  namespace: string
  uid: string
  sandboxId: string | null
  attempt: number
  ip: string | null
  containers: RunContainerResult[]
  phase: PodPhase | null
  logDirectory: string
  /** With --wait completed: the first failing app container's exit code (spec order), 0 when all succeeded. */
  exitCode: number | null
  rolledBack: boolean
  removed: boolean
  error: ReturnType<PodctlError['toJSON']> | null
}

export interface PodRunOutcome {
  result: PodRunResult
  failure?: PodctlError
}

interface Tracked {
  id: string
  attempt: number
  type: ContainerType
}

const DEFAULT_POLL_MS = 200

export class PodRun {
  private sandboxId?: string
  private attempt = 0
  private ips: string[] = []
  private sandboxConfig?: SandboxConfig
  private etcHostsPath?: string
  private readonly tracked = new Map<string, Tracked>()
  private readonly controller = new AbortController()
  private readonly backOff: BackOff
  private readonly volumePaths: Map<string, string>
  private readonly runtimeHandler: string

  constructor(
    private readonly pod: PodModel,
    /** Sandboxes that already exist for this pod's name and namespace. */
    private readonly existing: PodSandbox[],
    private readonly settings: PodRunSettings,
    private readonly deps: PodRunDeps,
  ) {
    this.backOff = settings.restartBackOff ?? new BackOff(ladderFromEnv(CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS))
    this.volumePaths = volumeHostPaths(pod, settings.podDirRoot)
    this.runtimeHandler = settings.runtimeHandler ?? pod.runtimeClassName ?? ''
    // Every pull, wait and call of this pod listens on this signal; that is expected, not a leak.
    setMaxListeners(0, this.controller.signal)
    if (deps.signal.aborted) this.controller.abort()
    else deps.signal.addEventListener('abort', this.onInterrupt, {once: true})
  }

  private readonly onInterrupt = () => this.controller.abort()

  private get signal(): AbortSignal {
    return this.controller.signal
  }

  private get client(): CriClient {
    return this.deps.client
  }

  private get object(): string {
    return podFullName(this.pod.name, this.pod.namespace)
  }

  async run(): Promise<PodRunOutcome> {
    try {
      return await this.runSteps()
    } finally {
      this.deps.signal.removeEventListener('abort', this.onInterrupt)
    }
  }

  private async runSteps(): Promise<PodRunOutcome> {
    let exitCode: number | null = null
    try {
      await this.replaceExisting()
      this.step('setting up volumes')
      await setUpVolumes(this.pod, this.settings.podDirRoot)
      await this.createSandbox()
      const prefetched = this.prefetchImages()
      for (const [index, container] of this.pod.initContainers.entries()) await this.runInitContainer(container, prefetched[index])
      const offset = this.pod.initContainers.length
      for (const [index, container] of this.pod.containers.entries()) {
        this.checkInterrupted()
        await this.start(container, 'app', await this.firstAttempt(container), prefetched[offset + index])
      }

      if (this.settings.wait === 'running') await this.waitRunning()
      if (this.settings.wait === 'completed') exitCode = await this.waitCompleted()
    } catch (error) {
      return this.fail(error)
    }

    const result = await this.report(exitCode)
    if (this.settings.remove) {
      this.step('removing the pod')
      await this.removePod()
      result.removed = true
    }

    return {result}
  }

  // -------------------------------------------------------------------------------------------
  // Steps

  /** Step 2: an existing pod of the same name is refused, or killed first with --replace (new sandbox attempt = latest + 1). */
  private async replaceExisting(): Promise<void> {
    const base = this.pod.attempt ?? 0
    if (this.existing.length === 0) {
      this.attempt = base
      return
    }

    const latest = [...this.existing].sort(newestFirst)[0]
    if (!this.settings.replace) {
      throw new AlreadyExistsError(
        `pod "${this.pod.name}" already exists in namespace "${this.pod.namespace}" (sandbox ${shortId(latest.id)}, attempt ${latest.metadata?.attempt ?? 0}); ` +
          `pass --replace to kill it and start a new one, or remove it with: podctl kill ${this.pod.name} -n ${this.pod.namespace}`,
      )
    }

    this.attempt = Math.max(base, ...this.existing.map((sandbox) => (sandbox.metadata?.attempt ?? 0) + 1))
    // The same pod, restarted: keep its identity (uid, log directory) unless the manifest names one.
    if (this.pod.uidGenerated && latest.metadata?.uid) this.pod.uid = latest.metadata.uid
    this.deps.events(normalEvent('SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.', this.object))
    this.step('killing the existing pod')
    await killPod(this.client, this.existing, {events: this.deps.events})
  }

  /** Steps 3: the sandbox, its IP, and the managed /etc/hosts. */
  private async createSandbox(): Promise<void> {
    this.checkInterrupted()
    this.sandboxConfig = generatePodSandboxConfig(this.pod, {
      attempt: this.attempt,
      logsRoot: this.settings.logsRoot,
      hostResolvConf: this.settings.hostResolvConf,
      podDirRoot: this.settings.podDirRoot,
    })
    this.step('creating the pod sandbox')
    // Not cancelled mid-call: the runtime would finish creating it anyway; the rollback finds it by uid.
    const created = await createPodSandbox(this.client, this.pod, this.sandboxConfig, {
      runtimeHandler: this.runtimeHandler,
      events: this.deps.events,
      onCreated: (id) => (this.sandboxId = id),
    })
    this.sandboxId = created.sandboxId
    this.ips = created.ips
    if (this.ips.length > 0) {
      this.etcHostsPath = await writeEtcHosts(this.settings.podDirRoot, this.pod.uid, this.ips, podHostname(this.pod))
    }

    this.checkInterrupted()
  }

  /** Ensure-image for every container at once (the image manager bounds concurrent pulls); awaited in the kubelet's order. */
  private prefetchImages(): Array<Promise<EnsureImageResult>> {
    return [...this.pod.initContainers, ...this.pod.containers].map((container) => {
      const pending = this.ensureImage(container)
      // Awaited later (or never, if an earlier container fails): never an unhandled rejection.
      pending.catch(() => {})
      return pending
    })
  }

  private ensureImage(container: ContainerModel): Promise<EnsureImageResult> {
    return this.deps.images.ensureImage({
      image: container.image,
      policy: container.imagePullPolicy,
      podUid: this.pod.uid,
      sandboxConfig: this.sandboxConfig,
      runtimeHandler: this.runtimeHandler,
      auth: this.settings.auth,
      authSource: this.settings.authSource,
      deadline: this.settings.deadline,
      signal: this.signal,
      eventObject: containerObject(this.pod, container),
    })
  }

  private async start(container: ContainerModel, type: ContainerType, attempt: number, ensured?: Promise<EnsureImageResult>): Promise<string> {
    this.checkInterrupted()
    this.step(`starting ${type === 'init' ? 'init container' : 'container'} ${container.name}`)
    const started = await startContainer({
      client: this.client,
      images: this.deps.images,
      pod: this.pod,
      container,
      type,
      attempt,
      sandboxId: this.sandboxId!,
      sandboxConfig: this.sandboxConfig!,
      runtimeHandler: this.runtimeHandler,
      volumePaths: this.volumePaths,
      etcHostsPath: this.etcHostsPath,
      terminationMessageFile: (name) => createTerminationMessageFile(this.settings.podDirRoot, this.pod.uid, name),
      nodeMemoryBytes: this.settings.nodeMemoryBytes,
      auth: this.settings.auth,
      authSource: this.settings.authSource,
      events: this.deps.events,
      deadline: this.settings.deadline,
      signal: this.signal,
      ensured,
      onCreated: (id) => this.tracked.set(container.name, {id, attempt, type}),
    }).catch(async (error: unknown) => {
      // A failed postStart kills its container (the kubelet's order); the rollback would too, but
      // with --keep-on-failure it is the only kill.
      if (error instanceof PodFailedError && error.reason === PodFailureReason.PostStartHookError && this.settings.keepOnFailure) {
        await this.killOne(container.name).catch(() => {})
      }

      throw error
    })
    this.checkInterrupted()
    return started.containerId
  }

  /** Step 4: one init container to successful completion, restarted per restartPolicy with the crash back-off. */
  private async runInitContainer(container: ContainerModel, ensured: Promise<EnsureImageResult>): Promise<void> {
    let attempt = await this.firstAttempt(container)
    let id = await this.start(container, 'init', attempt, ensured)
    let restarts = 0
    let lastExit: ContainerStatus | undefined
    for (;;) {
      this.step(`waiting for init container ${container.name}`)
      const status = await this.waitForExit(id, `init container "${container.name}"`).catch((error: unknown) => {
        throw restarts > 0 && error instanceof DeadlineExceededError ? this.crashLoop(container, lastExit, restarts) : error
      })
      if (status.exitCode === 0) return
      const reason = status.reason || 'Error'
      if (this.pod.restartPolicy === 'Never') {
        throw new PodFailedError(`init container "${container.name}" exited with code ${status.exitCode} (${reason}) and restartPolicy is Never`, {
          reason: initReason(reason),
          container: container.name,
        })
      }

      await this.backOffBeforeRestart(container, status)
      attempt++
      restarts++
      lastExit = status
      await this.pruneExited(container.name)
      id = await this.start(container, 'init', attempt)
    }
  }

  /** A container that keeps failing until --timeout: the kubelet's CrashLoopBackOff, with its last exit. */
  private crashLoop(container: ContainerModel, lastExit: ContainerStatus | undefined, restarts: number): PodctlError {
    const key = this.backOffKey(container)
    const described = podDescription(this.pod.name, this.pod.namespace, this.pod.uid)
    return new PodFailedError(
      `back-off ${formatMs(this.backOff.window(key))} restarting failed container=${container.name} pod=${described}: ` +
        `it exited with code ${lastExit?.exitCode ?? 'unknown'} and was restarted ${restarts} time${restarts === 1 ? '' : 's'} before --timeout ran out`,
      {reason: PodFailureReason.CrashLoopBackOff, container: container.name},
    )
  }

  private backOffKey(container: ContainerModel): string {
    return stableKey(this.pod, container)
  }

  /** --wait running: every app container running; ones that already exited are restarted per restartPolicy (crash back-off). */
  private async waitRunning(): Promise<void> {
    const done = new Set<string>()
    let pollMs = 50
    for (;;) {
      this.checkInterrupted()
      const states = await this.appContainerStates()
      let pending = false
      for (const container of this.pod.containers) {
        if (done.has(container.name)) continue
        const tracked = this.tracked.get(container.name)!
        const state = states.get(tracked.id)
        if (state === 'CONTAINER_RUNNING') {
          done.add(container.name)
          continue
        }

        if (state !== 'CONTAINER_EXITED') {
          pending = true
          continue
        }

        const status = await this.containerStatus(tracked.id)
        const exitCode = status?.exitCode ?? -1
        const reason = status?.reason || (exitCode === 0 ? 'Completed' : 'Error')
        const policy = this.pod.restartPolicy
        if (exitCode === 0 && policy !== 'Always') {
          done.add(container.name)
          continue
        }

        if (policy === 'Never') {
          throw new PodFailedError(`container "${container.name}" exited with code ${exitCode} (${reason}) and restartPolicy is Never`, {
            reason,
            container: container.name,
          })
        }

        await this.backOffBeforeRestart(container, status)
        await this.pruneExited(container.name)
        await this.start(container, 'app', tracked.attempt + 1)
        pending = true
      }

      if (!pending && done.size === this.pod.containers.length) return
      await this.sleep(pollMs, 'containers to run')
      pollMs = Math.min(pollMs * 2, this.settings.pollMs ?? DEFAULT_POLL_MS)
    }
  }

  /**
   * --wait completed: every app container exits. Only OnFailure restarts failed ones (with the
   * crash back-off): under Always a pod never completes, so podctl reports the first exit.
   */
  private async waitCompleted(): Promise<number> {
    const exitCodes = new Map<string, number>()
    let pollMs = 50
    for (;;) {
      this.checkInterrupted()
      this.step('waiting for the containers to complete')
      const states = await this.appContainerStates()
      for (const container of this.pod.containers) {
        if (exitCodes.has(container.name)) continue
        const tracked = this.tracked.get(container.name)!
        if (states.get(tracked.id) !== 'CONTAINER_EXITED') continue
        const status = await this.containerStatus(tracked.id)
        const exitCode = status?.exitCode ?? -1
        if (exitCode !== 0 && this.pod.restartPolicy === 'OnFailure') {
          await this.backOffBeforeRestart(container, status)
          await this.pruneExited(container.name)
          await this.start(container, 'app', tracked.attempt + 1)
          continue
        }

        exitCodes.set(container.name, exitCode)
      }

      if (exitCodes.size === this.pod.containers.length) {
        return this.pod.containers.map((container) => exitCodes.get(container.name)!).find((code) => code !== 0) ?? 0
      }

      await this.sleep(pollMs, 'the containers to complete')
      pollMs = Math.min(pollMs * 2, this.settings.pollMs ?? DEFAULT_POLL_MS)
    }
  }

  /** The kubelet's doBackOff: wait out the crash back-off window (BackOff event), or fail with CrashLoopBackOff when it ends after the deadline. */
  private async backOffBeforeRestart(container: ContainerModel, status: ContainerStatus | undefined): Promise<void> {
    const key = this.backOffKey(container)
    const finishedAt = status?.finishedAt && status.finishedAt !== '0' ? Number(BigInt(status.finishedAt) / 1_000_000n) : Date.now()
    const delay = this.backOff.delaySince(key, finishedAt)
    if (delay > 0) {
      const described = podDescription(this.pod.name, this.pod.namespace, this.pod.uid)
      this.deps.events(
        warningEvent('BackOff', `Back-off restarting failed container ${container.name} in pod ${described}`, containerObject(this.pod, container)),
      )
      if (this.settings.deadline !== undefined && Date.now() + delay >= this.settings.deadline) {
        throw new PodFailedError(
          `back-off ${formatMs(this.backOff.window(key))} restarting failed container=${container.name} pod=${described}: ` +
            `it exited with code ${status?.exitCode ?? 'unknown'} and the next restart would come after --timeout`,
          {reason: PodFailureReason.CrashLoopBackOff, container: container.name},
        )
      }

      this.step(`back-off ${formatMs(Math.ceil(delay / 1000) * 1000)} before restarting ${container.name}`)
      await this.sleep(delay, `the back-off of ${container.name}`)
    }

    this.backOff.next(key, finishedAt)
  }

  // -------------------------------------------------------------------------------------------
  // Runtime helpers

  /** A new container's restart count: after the log files of earlier attempts (a replaced pod keeps its uid and log directory). */
  private firstAttempt(container: ContainerModel): Promise<number> {
    if (container.logPath !== undefined) return Promise.resolve(0)
    return restartCountFromLogs(`${podLogDirectory(this.pod, this.settings.logsRoot)}/${container.name}`)
  }

  private async waitForExit(containerId: string, what: string): Promise<ContainerStatus> {
    let pollMs = 50
    for (;;) {
      this.checkInterrupted()
      const status = await this.containerStatus(containerId)
      if (!status) throw new PodFailedError(`${what} disappeared from the runtime while podctl waited for it`, {reason: PodFailureReason.ContainerMissing})
      if (status.state === 'CONTAINER_EXITED') return status
      await this.sleep(pollMs, what)
      pollMs = Math.min(pollMs * 2, this.settings.pollMs ?? DEFAULT_POLL_MS)
    }
  }

  private async containerStatus(containerId: string): Promise<ContainerStatus | undefined> {
    try {
      return (await this.client.runtime('containerStatus', {containerId, verbose: false}, {signal: this.signal})).status
    } catch (error) {
      if (error instanceof NotFoundError) return undefined
      throw error
    }
  }

  /** One ListContainers for the sandbox: id → state. */
  private async appContainerStates(): Promise<Map<string, string>> {
    const {containers} = await this.client.runtime('listContainers', {filter: {podSandboxId: this.sandboxId}}, {signal: this.signal})
    return new Map(containers.map((container) => [container.id, container.state]))
  }

  /** Before a restart, keep only the newest exited instance of the container (pruneInitContainersBeforeStart / container GC). */
  private async pruneExited(name: string): Promise<void> {
    const {containers} = await this.client.runtime('listContainers', {filter: {podSandboxId: this.sandboxId}}, {signal: this.signal})
    const exited = containers
      .filter((c) => c.metadata?.name === name && c.state === 'CONTAINER_EXITED')
      .sort(newestFirst)
      .slice(1)
    await Promise.all(exited.map((c) => this.client.runtime('removeContainer', {containerId: c.id}).catch(() => {})))
  }

  /** The kubelet's killContainer for one container of this pod (preStop, then stop within the grace period). */
  private async killOne(name: string): Promise<void> {
    const tracked = this.tracked.get(name)
    if (!tracked) return
    const {containers} = await this.client.runtime('listContainers', {filter: {id: tracked.id}})
    if (containers[0]) await killContainer(this.client, containers[0], {events: this.deps.events, pod: this.object})
  }

  /** Every sandbox of this pod (all attempts), found by the uid label so nothing half-made escapes. */
  private async sandboxes(): Promise<PodSandbox[]> {
    const {items} = await this.client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.uid]: this.pod.uid}}})
    const byId = new Map(items.map((sandbox) => [sandbox.id, sandbox]))
    return [...byId.values()].filter((sandbox) => sandbox.metadata?.name === this.pod.name && sandbox.metadata?.namespace === this.pod.namespace)
  }

  private async removePod(): Promise<void> {
    const sandboxes = await this.sandboxes()
    if (sandboxes.length > 0) await killPod(this.client, sandboxes, {events: this.deps.events})
    await removePodDirectory(this.settings.podDirRoot, this.pod.uid)
  }

  // -------------------------------------------------------------------------------------------
  // Failure, rollback and the result

  private async fail(error: unknown): Promise<PodRunOutcome> {
    const interrupted = this.deps.signal.aborted
    let failure = interrupted ? new InterruptedError(`run of pod ${this.object} was interrupted`) : asPodctlError(error)
    // Stop pulls and waits still in flight for this pod.
    this.controller.abort()

    const madeSomething = this.sandboxId !== undefined || !(failure instanceof AlreadyExistsError)
    let rolledBack = false
    let result: PodRunResult | undefined
    if (this.settings.keepOnFailure) {
      if (this.sandboxId) result = await this.report(null).catch(() => undefined)
    } else if (madeSomething) {
      this.step('rolling back')
      try {
        const sandboxes = await this.sandboxes()
        if (sandboxes.length > 0) await killPod(this.client, sandboxes, {events: this.deps.events})
        await removePodDirectory(this.settings.podDirRoot, this.pod.uid)
        rolledBack = sandboxes.length > 0 || this.sandboxId !== undefined
      } catch (rollbackError) {
        const why = (rollbackError as Error).message
        failure = withMessage(
          failure,
          `${failure.message}; rolling back also failed (${why}): remove the pod with podctl kill ${this.pod.name} -n ${this.pod.namespace}`,
        )
      }
    }

    if (rolledBack) {
      const logs = this.tracked.size > 0 ? `; container logs stay in ${podLogDirectory(this.pod, this.settings.logsRoot)}` : ''
      failure = withMessage(failure, `${failure.message} (rolled back${logs})`)
    }

    result ??= this.emptyResult()
    result.rolledBack = rolledBack
    result.phase ??= 'Failed'
    result.error = failure.toJSON()
    return {result, failure}
  }

  private emptyResult(): PodRunResult {
    return {
      pod: this.pod.name,
      namespace: this.pod.namespace,
      uid: this.pod.uid,
      sandboxId: this.sandboxId ?? null,
      attempt: this.attempt,
      ip: this.ips[0] ?? null,
      containers: [],
      phase: null,
      logDirectory: podLogDirectory(this.pod, this.settings.logsRoot),
      exitCode: null,
      rolledBack: false,
      removed: false,
      error: null,
    }
  }

  /** The pod as the runtime now reports it (getPodStatus): newest instance of each container, spec order. */
  private async report(exitCode: number | null): Promise<PodRunResult> {
    const result = this.emptyResult()
    result.exitCode = exitCode
    const sandboxes = (await this.sandboxes()).filter((sandbox) => sandbox.id === this.sandboxId)
    if (sandboxes.length === 0) return result
    const status = await getPodStatus(this.client, sandboxes)
    result.phase = status.phase
    result.ip = status.ip ?? result.ip
    const order = [...this.pod.initContainers, ...this.pod.containers].map((container) => container.name)
    for (const name of order) {
      const newest = status.containers.find((container) => container.name === name && container.podSandboxId === this.sandboxId)
      if (!newest) continue
      result.containers.push({
        name,
        id: newest.id,
        type: newest.type,
        state: newest.state,
        exitCode: newest.exitCode,
        attempt: newest.attempt,
        reason: newest.reason,
      })
    }

    return result
  }

  // -------------------------------------------------------------------------------------------

  private step(text: string): void {
    this.deps.onStep?.(`${this.object}: ${text}`)
  }

  private checkInterrupted(): void {
    if (this.signal.aborted) throw new InterruptedError(`run of pod ${this.object} was interrupted`)
  }

  /** Sleeps, but not past the deadline (DeadlineExceeded) and not past an interrupt. */
  private sleep(ms: number, waitingFor: string): Promise<void> {
    const deadline = this.settings.deadline
    if (deadline !== undefined && Date.now() + Math.min(ms, 50) >= deadline) {
      return Promise.reject(
        new DeadlineExceededError(`pod ${this.object}: still waiting for ${waitingFor} when --timeout ran out; raise --timeout to wait longer`),
      )
    }

    const wait = deadline === undefined ? ms : Math.min(ms, deadline - Date.now())
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer)
        reject(new InterruptedError(`run of pod ${this.object} was interrupted`))
      }

      const timer = setTimeout(() => {
        this.signal.removeEventListener('abort', onAbort)
        resolve()
      }, wait)
      this.signal.addEventListener('abort', onAbort, {once: true})
    })
  }
}

/** The same failure (code, exit code, class for instanceof checks) with another message. */
function withMessage(failure: PodctlError, message: string): PodctlError {
  const copy = Object.create(Object.getPrototypeOf(failure)) as PodctlError
  Object.assign(copy, failure)
  Object.defineProperty(copy, 'message', {value: message, enumerable: false, writable: true, configurable: true})
  return copy
}

export function runPod(pod: PodModel, existing: PodSandbox[], settings: PodRunSettings, deps: PodRunDeps): Promise<PodRunOutcome> {
  return new PodRun(pod, existing, settings, deps).run()
}
