/**
 * `podctl run` for one pod, in the kubelet's order (SyncPod for a new pod): an existing pod is
 * refused or replaced (attempt + 1), volumes are set up, RunPodSandbox, init containers one by one
 * to completion (restarted with the crash back-off per restartPolicy) — a sidecar only until it has
 * started (sidecars.ts) — app containers started in
 * order with their postStart hooks, then the wait the user asked for (pod-wait.ts). Any failure —
 * and an interrupt — rolls the pod back with killPod, so nothing is left half-created, unless
 * keepOnFailure. Image pulls for all containers start as soon as the sandbox exists (bounded by
 * the image manager); creation and start order stay the kubelet's.
 */
import {setMaxListeners} from 'node:events'

import type {CriClient} from '../cri/client.js'
import {AlreadyExistsError, asPodctlError, InterruptedError} from '../errors.js'
import type {ContainerModel, ContainerType, PodModel} from '../manifest/model.js'
import type {PodSandbox} from '../../generated/runtime/v1/api.js'
import type {EnsureImageResult} from '../images/image-manager.js'
import {BackOff, CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS, ladderFromEnv} from '../kube/backoff.js'
import {type EventSink, normalEvent} from '../kube/events.js'
import {newestFirst, podFullName, shortId} from '../kube/helpers.js'
import {ensureImageOptions, type ImageEnsurer, restartCountFromLogs, startContainer} from './container.js'
import {type NodeDownward, nodeDownwardContext} from './env.js'
import {killContainer, killPod} from './kill.js'
import {createTerminationMessageFile, removePodDirectory, setUpVolumes, volumeHostPaths, writePodEtcHosts} from './pod-dirs.js'
import {
  completeInitContainer,
  type PodWaitContext,
  throwIfInterrupted,
  type TrackedContainer,
  waitCompleted,
  waitRunning,
} from './pod-wait.js'
import {probeHost, waitReady} from './wait-ready.js'
import {awaitSidecarStarted, isSidecar, stopSidecarsOfCompletedPod} from './sidecars.js'
import {PodFailedError, PodFailureReason} from './reasons.js'
import {DEFAULT_SETTLE_MS, settleRunning} from './settle.js'
import {emptyResult, type PodRunOutcome, type PodRunResult, reportResult, type RunProgress, withMessage} from './run-result.js'
import {killForRecreation, removeReplacedSandboxes, sandboxesToReplace} from './recreate-pod.js'
import {formatSeconds, removePodRemains} from './rollback.js'
import {createPodSandbox, generatePodSandboxConfig, podLogDirectory, podSandboxes, type SandboxContext} from './sandbox.js'

export {ROLLBACK_BUDGET_MS} from './rollback.js'
// What runPod returns, for its callers.
export type {PodRunOutcome, PodRunResult, RunContainerResult} from './run-result.js'

export type WaitMode = 'running' | 'ready' | 'completed' | 'none'

export interface PodRunSettings {
  wait: WaitMode
  /** Epoch ms: the overall deadline of the run (--timeout); undefined = none. */
  deadline?: number
  replace: boolean
  /** A sandbox recreation of the same pod (sync): its directory and volumes' data stay (recreate-pod.ts). */
  recreate?: boolean
  keepOnFailure: boolean
  /** --rm: remove the pod once it has completed. */
  remove: boolean
  logsRoot: string
  podDirRoot: string
  /** Overrides spec.runtimeClassName. */
  runtimeHandler?: string
  hostResolvConf: string
  nodeMemoryBytes: number
  /** The node's cores, for admission (OutOfcpu); admission is skipped when absent or with skipAdmission. */
  nodeCpus?: number
  skipAdmission?: boolean
  auth?: Parameters<ImageEnsurer['ensureImage']>[0]['auth']
  authSource?: string
  /** The crash back-off; default the kubelet's 10 s → 300 s (or PODCTL_BACKOFF_BASE_MS). */
  restartBackOff?: BackOff
  /** How often container states are polled while waiting (ms). */
  pollMs?: number
  /** --settle: how long --wait running watches the containers after the last start (ms). */
  settleMs?: number
}

export interface PodRunDeps {
  client: CriClient
  images: ImageEnsurer
  events: EventSink
  /** Aborted on SIGINT/SIGTERM: stop waiting, roll back. */
  signal: AbortSignal
  /** What the run is doing now (for a spinner). */
  onStep?: (text: string) => void
  /** Every container has been started and what is left is the settle window: the pod's share of --parallel is free. */
  onStarted?: () => void
}

const DEFAULT_POLL_MS = 200

/** What every step of one pod's run uses and never changes. */
interface SyncContext {
  client: CriClient
  images: ImageEnsurer
  events: EventSink
  settings: PodRunSettings
  backOff: BackOff
  /** The user's interrupt (deps.signal). */
  interrupt: AbortSignal
  /** This pod's own signal: aborted by the interrupt, and by a failure to stop pulls and waits still in flight. */
  controller: AbortController
  /** The pod in messages and events: name_namespace. */
  object: string
  step(text: string): void
  started?: () => void
}

/** What the run has made so far; the steps extend it and the rollback and the result read it. */
interface PodRunState extends RunProgress {
  sandbox?: SandboxContext
  node?: NodeDownward
  tracked: Map<string, TrackedContainer>
  /** A recreation of the same pod: its old sandboxes, stopped, removed once the new one runs. */
  replaced?: PodSandbox[]
}

export async function runPod(pod: PodModel, existing: PodSandbox[], settings: PodRunSettings, deps: PodRunDeps): Promise<PodRunOutcome> {
  const controller = new AbortController()
  // Every pull, wait and call of this pod listens on this signal; that is expected, not a leak.
  setMaxListeners(0, controller.signal)
  const onInterrupt = () => controller.abort()
  if (deps.signal.aborted) controller.abort()
  else deps.signal.addEventListener('abort', onInterrupt, {once: true})
  const object = podFullName(pod.name, pod.namespace)
  const ctx: SyncContext = {
    client: deps.client,
    images: deps.images,
    events: deps.events,
    settings,
    backOff: settings.restartBackOff ?? new BackOff(ladderFromEnv(CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS)),
    interrupt: deps.signal,
    controller,
    object,
    step: (text) => deps.onStep?.(`${object}: ${text}`),
    started: deps.onStarted,
  }
  try {
    return await syncPod(ctx, {pod, attempt: 0, ips: [], tracked: new Map()}, existing)
  } finally {
    deps.signal.removeEventListener('abort', onInterrupt)
  }
}

async function syncPod(ctx: SyncContext, run: PodRunState, existing: PodSandbox[]): Promise<PodRunOutcome> {
  const {settings} = ctx
  let exitCode: number | null = null
  try {
    await replaceExisting(ctx, run, existing)
    ctx.step('setting up volumes')
    run.node = await nodeDownwardContext(settings.nodeMemoryBytes, settings.podDirRoot)
    await setUpVolumes(run.pod, settings.podDirRoot, {...run.node, podIPs: []})
    const sandbox = await createSandbox(ctx, run)
    const images = prefetchImages(ctx, run.pod, sandbox)
    const waits = podWaitContext(ctx, run, sandbox)
    for (const [index, container] of run.pod.initContainers.entries()) {
      const attempt = await firstAttempt(ctx, run.pod, container)
      const id = await start(ctx, run, container, 'init', attempt, images[index])
      // A sidecar is not waited on to complete: the next one starts once it has started.
      await (isSidecar(container)
        ? awaitSidecarStarted(waits, container, {id, attempt}, probeHost(run.pod, run.ips))
        : completeInitContainer(waits, container, {id, attempt}))
    }

    const offset = run.pod.initContainers.length
    for (const [index, container] of run.pod.containers.entries()) {
      throwIfInterrupted(ctx.controller.signal, ctx.object)
      await start(ctx, run, container, 'app', await firstAttempt(ctx, run.pod, container), images[offset + index])
    }

    // The settle window only watches: the next pod may start meanwhile. Waits for ready or completed
    // keep their slot, so --parallel also bounds the pods being polled (and probed) at once.
    if (settings.wait === 'running') ctx.started?.()

    if (settings.wait === 'running') await waitRunning(waits).then(() => settleRunning(waits, settings.settleMs ?? DEFAULT_SETTLE_MS))
    if (settings.wait === 'ready') await waitReady(waits, probeHost(run.pod, run.ips))
    if (settings.wait === 'completed') {
      exitCode = await waitCompleted(waits)
      // As the kubelet kills a finished pod, its sidecars do not outlive the app containers.
      await stopSidecarsOfCompletedPod(waits)
    }

    if (run.replaced) await removeReplacedSandboxes(ctx.client, run.replaced, settings.podDirRoot)
  } catch (error) {
    return rollBack(ctx, run, error)
  }

  const result = await reportResult(ctx.client, run, settings.logsRoot, exitCode)
  if (settings.remove) {
    ctx.step('removing the pod')
    await removePod(ctx, run.pod)
    result.removed = true
  }

  return {result}
}

/**
 * Step 2: an existing pod of the same name is refused, or killed first with --replace (new sandbox
 * attempt = latest + 1). The replacement keeps the old pod's identity (uid, log directory) unless
 * the manifest names one: the run carries a copy of the pod with that uid, the input is untouched.
 */
async function replaceExisting(ctx: SyncContext, run: PodRunState, existing: PodSandbox[]): Promise<void> {
  const {pod} = run
  const base = pod.attempt ?? 0
  if (existing.length === 0) {
    run.attempt = base
    return
  }

  const latest = [...existing].sort(newestFirst)[0]
  if (!ctx.settings.replace) {
    throw new AlreadyExistsError(
      `pod "${pod.name}" already exists in namespace "${pod.namespace}" ` +
        `(sandbox ${shortId(latest.id)}, attempt ${latest.metadata?.attempt ?? 0}); ` +
        `pass --replace to kill it and start a new one, or remove it with: podctl kill ${pod.name} -n ${pod.namespace}`,
    )
  }

  run.attempt = Math.max(base, ...existing.map((sandbox) => (sandbox.metadata?.attempt ?? 0) + 1))
  if (pod.uidGenerated && latest.metadata?.uid) run.pod = {...pod, uid: latest.metadata.uid}
  ctx.events(normalEvent('SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.', ctx.object))
  ctx.step('killing the existing pod')
  if (ctx.settings.recreate) {
    // Known before the kill: a kill that fails half-way must not make the rollback remove the pod's volumes.
    run.replaced = sandboxesToReplace(existing, run.pod.uid)
    await killForRecreation(ctx.client, existing, run.pod.uid, {events: ctx.events, podDirRoot: ctx.settings.podDirRoot})
  } else await killPod(ctx.client, existing, {events: ctx.events})
}

/** Step 3: the sandbox, its IP, and the managed /etc/hosts; the context every container is started in. */
async function createSandbox(ctx: SyncContext, run: PodRunState): Promise<SandboxContext> {
  const {settings} = ctx
  const {pod} = run
  throwIfInterrupted(ctx.controller.signal, ctx.object)
  const config = generatePodSandboxConfig(pod, {
    attempt: run.attempt,
    logsRoot: settings.logsRoot,
    hostResolvConf: settings.hostResolvConf,
    podDirRoot: settings.podDirRoot,
  })
  const runtimeHandler = settings.runtimeHandler ?? pod.runtimeClassName ?? ''
  ctx.step('creating the pod sandbox')
  // Not cancelled mid-call: the runtime would finish creating it anyway; the rollback finds it by uid.
  const created = await createPodSandbox(ctx.client, pod, config, {
    runtimeHandler,
    events: ctx.events,
    onCreated: (id) => (run.sandboxId = id),
  })
  run.sandboxId = created.sandboxId
  run.ips = created.ips
  const etcHostsPath = created.ips.length > 0 ? await writePodEtcHosts(settings.podDirRoot, pod, created.ips) : undefined
  const volumePaths = volumeHostPaths(pod, settings.podDirRoot)
  run.sandbox = {id: created.sandboxId, config, runtimeHandler, etcHostsPath, volumePaths, ips: created.ips, node: run.node}
  throwIfInterrupted(ctx.controller.signal, ctx.object)
  return run.sandbox
}

/** Ensure-image for every container at once (the image manager bounds concurrent pulls); awaited in the kubelet's order. */
function prefetchImages(ctx: SyncContext, pod: PodModel, sandbox: SandboxContext): Array<Promise<EnsureImageResult>> {
  return [...pod.initContainers, ...pod.containers].map((container) => {
    const pending = ensureImage(ctx, pod, container, sandbox)
    // Awaited later (or never, if an earlier container fails): never an unhandled rejection.
    pending.catch(() => {})
    return pending
  })
}

function ensureImage(ctx: SyncContext, pod: PodModel, container: ContainerModel, sandbox: SandboxContext): Promise<EnsureImageResult> {
  const {auth, authSource, deadline} = ctx.settings
  return ctx.images.ensureImage(ensureImageOptions(pod, container, sandbox, {auth, authSource, deadline, signal: ctx.controller.signal}))
}

/** startContainer for one container of this pod; a restart ensures its image again (`image` absent). */
async function start(
  ctx: SyncContext,
  run: PodRunState,
  container: ContainerModel,
  type: ContainerType,
  attempt: number,
  image?: Promise<EnsureImageResult>,
): Promise<string> {
  const {settings, controller} = ctx
  const {pod} = run
  const sandbox = run.sandbox!
  throwIfInterrupted(controller.signal, ctx.object)
  ctx.step(`starting ${type === 'init' ? 'init container' : 'container'} ${container.name}`)
  const started = await startContainer(ctx.client, pod, container, sandbox, {
    type,
    attempt,
    image: image ?? ensureImage(ctx, pod, container, sandbox),
    nodeMemoryBytes: settings.nodeMemoryBytes,
    terminationMessageFile: (name) => createTerminationMessageFile(settings.podDirRoot, pod.uid, name),
    events: ctx.events,
    deadline: settings.deadline,
    podIP: run.ips[0],
    signal: controller.signal,
    onCreated: (id) => run.tracked.set(container.name, {id, attempt, type}),
  }).catch(async (error: unknown) => {
    // A failed postStart kills its container (the kubelet's order); the rollback would too, but
    // with --keep-on-failure it is the only kill.
    if (error instanceof PodFailedError && error.reason === PodFailureReason.PostStartHookError && settings.keepOnFailure) {
      await killTracked(ctx, run, container.name).catch(() => {})
    }

    throw error
  })
  throwIfInterrupted(controller.signal, ctx.object)
  return started.containerId
}

function podWaitContext(ctx: SyncContext, run: PodRunState, sandbox: SandboxContext): PodWaitContext {
  return {
    client: ctx.client,
    pod: run.pod,
    sandboxId: sandbox.id,
    tracked: run.tracked,
    backOff: ctx.backOff,
    events: ctx.events,
    deadline: ctx.settings.deadline,
    pollMs: ctx.settings.pollMs ?? DEFAULT_POLL_MS,
    signal: ctx.controller.signal,
    object: ctx.object,
    step: ctx.step,
    start: (container, type, attempt) => start(ctx, run, container, type, attempt),
  }
}

/** A new container's restart count: after the log files of earlier attempts (a replaced pod keeps its uid and log directory). */
function firstAttempt(ctx: SyncContext, pod: PodModel, container: ContainerModel): Promise<number> {
  if (container.logPath !== undefined) return Promise.resolve(0)
  return restartCountFromLogs(`${podLogDirectory(pod, ctx.settings.logsRoot)}/${container.name}`)
}

/** The kubelet's killContainer for one container of this pod (preStop, then stop within the grace period). */
async function killTracked(ctx: SyncContext, run: PodRunState, name: string): Promise<void> {
  const tracked = run.tracked.get(name)
  if (!tracked) return
  const {containers} = await ctx.client.runtime('listContainers', {filter: {id: tracked.id}})
  if (containers[0]) await killContainer(ctx.client, containers[0], {events: ctx.events, pod: ctx.object})
}

async function removePod(ctx: SyncContext, pod: PodModel): Promise<void> {
  const sandboxes = await podSandboxes(ctx.client, pod)
  if (sandboxes.length > 0) await killPod(ctx.client, sandboxes, {events: ctx.events, podDirRoot: ctx.settings.podDirRoot})
  await removePodDirectory(ctx.settings.podDirRoot, pod.uid)
}

/** A step failed or the user interrupted: kill every sandbox of the pod and remove its directory, unless keepOnFailure. */
async function rollBack(ctx: SyncContext, run: PodRunState, error: unknown): Promise<PodRunOutcome> {
  const {settings, client, object} = ctx
  const {pod} = run
  let failure = ctx.interrupt.aborted ? new InterruptedError(`run of pod ${object} was interrupted`) : asPodctlError(error)
  // Stop pulls and waits still in flight for this pod.
  ctx.controller.abort()

  const madeSomething = run.sandboxId !== undefined || !(failure instanceof AlreadyExistsError)
  let rolledBack = false
  let result: PodRunResult | undefined
  if (settings.keepOnFailure) {
    if (run.sandboxId) result = await reportResult(client, run, settings.logsRoot, null).catch(() => undefined)
  } else if (madeSomething) {
    ctx.step('rolling back')
    // A failed recreation removes what it made; the pod keeps its stopped sandbox and its volumes' data.
    const fromAttempt = run.replaced ? run.attempt : undefined
    const removal = await removePodRemains(ctx.client, run.pod, {events: ctx.events, podDirRoot: settings.podDirRoot, fromAttempt})
    if (removal.error === undefined) {
      rolledBack = removal.found || run.sandboxId !== undefined
    } else {
      const left =
        removal.sandboxIds.length > 0 ? removal.sandboxIds.map(shortId).join(', ') : run.sandboxId ? shortId(run.sandboxId) : 'unknown'
      failure = withMessage(
        failure,
        `${failure.message}; rolling back failed for ${formatSeconds(removal.ms)} (${removal.error.message}): ` +
          `left behind pod ${object} (sandbox ${left}); remove it with: podctl kill ${pod.name} -n ${pod.namespace}`,
      )
    }

    if (rolledBack) {
      const retried = removal.attempts > 1 ? ` after ${removal.attempts} attempts in ${formatSeconds(removal.ms)}` : ''
      const logs = run.tracked.size > 0 ? `; container logs stay in ${podLogDirectory(pod, settings.logsRoot)}` : ''
      failure = withMessage(failure, `${failure.message} (rolled back${retried}${logs})`)
    }

    const kept = run.replaced?.map((sandbox) => sandbox.metadata?.attempt ?? 0).join(', ')
    if (kept) failure = withMessage(failure, `${failure.message}; the pod keeps its volumes and its stopped sandbox (attempt ${kept})`)
  }

  result ??= emptyResult(run, settings.logsRoot)
  result.rolledBack = rolledBack
  result.phase ??= 'Failed'
  result.error = failure.toJSON()
  return {result, failure}
}
