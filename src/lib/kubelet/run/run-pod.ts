/**
 * `podctl run` for one pod, through its pod worker (workers/pod-workers.ts), in the kubelet's order
 * for a new pod: an existing pod is refused or replaced (attempt + 1); the desired pod is recorded
 * (pod.json); the worker creates its sandbox (volumes, RunPodSandbox: the kubelet's SyncPodCreate)
 * and runs SyncPod passes — the only code that starts, kills and restarts containers, with this run's
 * one crash back-off — until the wait the user asked for holds (pod-wait.ts). Any failure — and an
 * interrupt — rolls the pod back through the worker (its termination recorded first), so nothing is
 * left half-created, unless keepOnFailure. Image pulls for all containers start as soon as the
 * sandbox exists (bounded by the image manager); creation and start order stay the kubelet's.
 */
import {setMaxListeners} from 'node:events'
import {rm} from 'node:fs/promises'

import type {CriClient} from '../../cri/client.js'
import {AlreadyExistsError, asPodctlError, InterruptedError} from '../../errors.js'
import type {PodModel} from '../../manifest/model.js'
import type {PodSandbox} from '../../../generated/runtime/v1/api.js'
import type {EnsureImageOptions, EnsureImageResult} from '../../images/image-manager.js'
import type {BackOff} from '../../kube/backoff.js'
import {type EventSink, normalEvent} from '../../kube/events.js'
import {newestFirst, podFullName, shortId} from '../../kube/helpers.js'
import {ensureImageOptions, type ImageEnsurer} from '../kuberuntime/container.js'
import {desiredPodPath, recordDesiredPod} from '../config/desired-state.js'
import {killContainer} from '../kuberuntime/kill.js'
import {removePodDirectory} from '../volumes/pod-dirs.js'
import {syncUntil, throwIfInterrupted, type WaitMode} from './pod-wait.js'
import {PodFailedError, PodFailureReason, withMessage} from '../core/reasons.js'
import {crashBackOff} from '../kuberuntime/crash-backoff.js'
import {emptyResult, type PodRunOutcome, type PodRunResult, reportResult, type RunProgress} from './run-result.js'
import {podWorkers} from '../workers/pod-workers.js'
import {successorOf} from '../kuberuntime/recreate-pod.js'
import {podLogDirectory, podSandboxes, type SandboxContext} from '../kuberuntime/sandbox.js'

export {ROLLBACK_BUDGET_MS} from '../kuberuntime/rollback.js'
export type {WaitMode} from './pod-wait.js'

// What runPod returns, for its callers.
export type {PodRunOutcome, PodRunResult, RunContainerResult} from './run-result.js'

export interface PodRunSettings {
  wait: WaitMode
  /** Epoch ms: the overall deadline of the run (--timeout); undefined = none. */
  deadline?: number
  replace: boolean
  /**
   * A workload whose pods of another template run (its template changed since) is refused up front, or
   * with replace those pods are terminated once the new ones run (run-pods.ts); 'leave' leaves them to
   * the caller (the watched source rolls its workloads out itself).
   */
  otherTemplates?: 'leave'
  keepOnFailure: boolean
  /**
   * A rollback removes the pod's log directory too (the library, whose errors carry the last log
   * lines); by default the container logs stay for `podctl logs` and the message names them.
   */
  removeLogsOnRollback?: boolean
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
  /** The crash back-off every SyncPod pass of the run uses; default the kubelet's 10 s → 300 s (or PODCTL_BACKOFF_BASE_MS). */
  restartBackOff?: BackOff
  /** How often container states are polled while waiting (ms). */
  pollMs?: number
  /** --settle: how long --wait running watches the containers after the last start (ms). */
  settleMs?: number
  /** run --supervise: once every container started, the pod is the supervisor's (no settle window; a crash is its to restart). */
  supervised?: boolean
  /**
   * --pull-retries: how often a pull the registry refused (not found, unauthorized) is tried again
   * (the image manager's refusedPullRetries). Default: none, the registry's answer at once; supervised,
   * the kubelet's back-off until the deadline.
   */
  pullRetries?: number
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
  /** A container was created (its logs stay after a rollback). */
  created: boolean
  /** pod.json was written for this run. */
  recorded: boolean
}

export async function runPod(pod: PodModel, existing: PodSandbox[], settings: PodRunSettings, deps: PodRunDeps): Promise<PodRunOutcome> {
  const controller = new AbortController()
  // Every pull, wait and call of this pod listens on this signal; that is expected, not a leak.
  setMaxListeners(0, controller.signal)
  const onInterrupt = () => controller.abort()
  if (deps.signal.aborted) controller.abort()
  else deps.signal.addEventListener('abort', onInterrupt, {once: true})
  const object = podFullName(pod.name, pod.namespace)
  const run: PodRunState = {pod, attempt: 0, ips: [], created: false, recorded: false}
  const ctx: SyncContext = {
    client: deps.client,
    images: deps.images,
    events(event) {
      if (event.reason === 'Created') run.created = true
      deps.events(event)
    },
    settings,
    backOff: settings.restartBackOff ?? crashBackOff(),
    interrupt: deps.signal,
    controller,
    object,
    step: (text) => deps.onStep?.(`${object}: ${text}`),
    started: deps.onStarted,
  }
  try {
    return await runSteps(ctx, run, existing)
  } finally {
    deps.signal.removeEventListener('abort', onInterrupt)
  }
}

async function runSteps(ctx: SyncContext, run: PodRunState, existing: PodSandbox[]): Promise<PodRunOutcome> {
  const {settings} = ctx
  let result: PodRunResult
  try {
    await replaceExisting(ctx, run, existing)
    throwIfInterrupted(ctx.controller.signal, ctx.object)
    // The desired pod first, as every source writes it; this run holds the pod's pass lock, so no
    // supervisor acts on it until the run is done. The rollback removes it.
    run.recorded = true
    await recordDesiredPod(settings.podDirRoot, run.pod, ctx.client.runtimeEndpoint)
    const sandbox = await podWorkers.create(ctx.client, run.pod, {
      attempt: run.attempt,
      settings,
      hooks: {events: ctx.events, step: ctx.step, onCreated: (id) => (run.sandboxId = id)},
    })
    run.sandbox = sandbox
    run.sandboxId = sandbox.id
    run.ips = sandbox.ips ?? []
    throwIfInterrupted(ctx.controller.signal, ctx.object)
    const exitCode = await syncUntil(
      {
        client: ctx.client,
        pod: run.pod,
        sandboxId: sandbox.id,
        sandbox,
        backOff: ctx.backOff,
        images: prefetchImages(ctx, run.pod, sandbox),
        events: ctx.events,
        settings,
        deadline: settings.deadline,
        pollMs: settings.pollMs ?? DEFAULT_POLL_MS,
        settleMs: settings.settleMs,
        handOver: settings.supervised,
        signal: ctx.controller.signal,
        object: ctx.object,
        step: ctx.step,
        started: ctx.started,
      },
      settings.wait,
    )
    // Inside the rollback's reach: a runtime that stops answering while the result is read must not
    // leave a started pod that nobody owns (a supervisor counts a failed run as not applied, so the
    // removal of its file would never kill it).
    result = await reportResult(ctx.client, run, settings.logsRoot, exitCode)
  } catch (error) {
    return rollBack(ctx, run, error)
  }

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
  const successor = successorOf(pod, existing)
  if (existing.length === 0) {
    run.attempt = successor.attempt
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

  run.attempt = successor.attempt
  run.pod = successor.pod
  ctx.events(normalEvent('SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.', ctx.object))
  ctx.step('killing the existing pod')
  // The pod lives on under its uid and directory: its record stays, and this run holds its pass lock.
  await podWorkers.terminate(ctx.client, ctx.object, existing, {requestedBy: 'podctl run --replace', events: ctx.events, lock: false})
}

/**
 * Ensure-image for every container at once, as soon as the sandbox exists (the image manager
 * bounds concurrent pulls): the passes' first ensure of each container is answered by its pull
 * under way; a later one (a restart) ensures again. Credentials given to run go with every pull.
 */
function prefetchImages(ctx: SyncContext, pod: PodModel, sandbox: SandboxContext): ImageEnsurer {
  const {auth, authSource, deadline} = ctx.settings
  const ensure = (options: EnsureImageOptions) => ctx.images.ensureImage({...options, auth, authSource})
  const ahead = new Map<string, Promise<EnsureImageResult>>()
  for (const container of [...pod.initContainers, ...pod.containers]) {
    const options = ensureImageOptions(pod, container, sandbox, {deadline, signal: ctx.controller.signal})
    const pending = ensure(options)
    // Awaited later (or never, if an earlier container fails): never an unhandled rejection.
    pending.catch(() => {})
    ahead.set(`${options.eventObject} ${options.image}`, pending)
  }

  return {
    ensureImage(options) {
      const key = `${options.eventObject} ${options.image}`
      const pending = ahead.get(key)
      ahead.delete(key)
      return pending ?? ensure(options)
    },
  }
}

async function removePod(ctx: SyncContext, pod: PodModel): Promise<void> {
  const sandboxes = await podSandboxes(ctx.client, pod)
  const {podDirRoot} = ctx.settings
  const remove = {requestedBy: 'podctl run --rm', forget: true, events: ctx.events, podDirRoot, lock: false} as const
  if (sandboxes.length > 0) await podWorkers.terminate(ctx.client, ctx.object, sandboxes, remove)
  await removePodDirectory(podDirRoot, pod.uid)
}

/** A step failed or the user interrupted: kill every sandbox of the pod and remove its directory, unless keepOnFailure. */
async function rollBack(ctx: SyncContext, run: PodRunState, error: unknown): Promise<PodRunOutcome> {
  const {settings, client, object} = ctx
  const {pod} = run
  let failure = ctx.interrupt.aborted ? new InterruptedError(`run of pod ${object} was interrupted`) : asPodctlError(error)
  // Stop pulls and waits still in flight for this pod.
  ctx.controller.abort()

  // A pod whose termination another podctl asked for is left to it (with its grace period or --force).
  const terminated = failure instanceof PodFailedError && failure.reason === PodFailureReason.Terminated
  const madeSomething = !terminated && (run.sandboxId !== undefined || !(failure instanceof AlreadyExistsError))
  let rolledBack = false
  let result: PodRunResult | undefined
  if (settings.keepOnFailure) {
    // A failed postStart kills its container (the kubelet's order); the rollback would too, but
    // with --keep-on-failure it is the only kill.
    if (failure instanceof PodFailedError && failure.reason === PodFailureReason.PostStartHookError && failure.containerId) {
      await killFailed(ctx, failure.containerId).catch(() => {})
    }

    // The pod is kept to be looked at, not run: it is not recorded for sync.
    if (run.recorded) await rm(desiredPodPath(settings.podDirRoot, pod.uid), {force: true}).catch(() => {})
    if (run.sandboxId) result = await reportResult(client, run, settings.logsRoot, null).catch(() => undefined)
    if (failure instanceof PodFailedError && failure.logPath && failure.container) {
      const [first, ...rest] = failure.message.split('\n')
      const see = `; see its log with: podctl logs ${pod.name}/${failure.container} -n ${pod.namespace}`
      failure = withMessage(failure, [first + see, ...rest].join('\n'))
    }
  } else if (madeSomething) {
    ctx.step('rolling back')
    const removeLogs = settings.removeLogsOnRollback === true
    const logDirectory = run.created && !removeLogs ? podLogDirectory(pod, settings.logsRoot) : undefined
    const rollBack = await podWorkers.rollBack(client, pod, failure, {
      events: ctx.events,
      podDirRoot: settings.podDirRoot,
      sandboxId: run.sandboxId,
      logDirectory,
      emptyLogDirectory: podLogDirectory(pod, settings.logsRoot),
      podLogsRoot: removeLogs ? settings.logsRoot : undefined,
    })
    failure = rollBack.failure
    rolledBack = rollBack.rolledBack
  }

  result ??= emptyResult(run, settings.logsRoot)
  result.rolledBack = rolledBack
  result.phase ??= 'Failed'
  result.error = failure.toJSON()
  return {result, failure}
}

/** The kubelet's killContainer for the container whose postStart failed (preStop, then stop within the grace period). */
async function killFailed(ctx: SyncContext, containerId: string): Promise<void> {
  const {containers} = await ctx.client.runtime('listContainers', {filter: {id: containerId}})
  if (containers[0]) await killContainer(ctx.client, containers[0], {events: ctx.events, pod: ctx.object})
}
