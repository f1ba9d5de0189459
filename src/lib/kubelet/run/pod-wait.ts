/**
 * `podctl run --wait X` as SyncPod passes, each asked of the pod's worker (workers/pod-workers.ts:
 * observe → computePodActions → act), which starts, kills and restarts the pod's containers, with the one crash back-off the run
 * keeps, and between passes the run only watches until X holds — running (every sidecar and app
 * container started, then the settle window), ready (and passing its readiness probes), completed
 * (every app container done for good). A pass is made when there is something to do outside a
 * back-off window; a container that keeps failing until --timeout ends as CrashLoopBackOff, an init
 * container that fails under restartPolicy Never as Init:<reason>.
 */
import {DeadlineExceededError, formatMs, InterruptedError} from '../../errors.js'
import type {ContainerModel, PodModel} from '../../manifest/model.js'
import type {BackOff} from '../../kube/backoff.js'
import {podDescription, stableKey} from '../../kube/helpers.js'
import type {ContainerType} from '../../kube/labels.js'
import {sleep} from '../../util/concurrency.js'
import type {ImageEnsurer} from '../kuberuntime/container.js'
import {computePodActions, type ContainerToStart, isSidecar, type ObservedContainer, type PodActions} from '../kuberuntime/pod-actions.js'
import {observePod} from '../kuberuntime/pod-observe.js'
import {restartDelay} from '../kuberuntime/crash-backoff.js'
import type {PodSyncResult, SyncSettings} from '../kuberuntime/sync-pod.js'
import {podWorkers} from '../workers/pod-workers.js'
import {readTermination} from '../config/termination-record.js'
import {initReason, PodFailedError, PodFailureReason} from '../core/reasons.js'
import {podSandboxes, type SandboxContext} from '../kuberuntime/sandbox.js'
import {DEFAULT_SETTLE_MS, settleRunning} from './settle.js'
import {longRunningContainers, stopSidecarsOfCompletedPod} from '../kuberuntime/sidecars.js'
import {probeHost, ReadinessWatch} from './wait-ready.js'
import type {PodWaitContext} from './wait-context.js'

export type WaitMode = 'running' | 'ready' | 'completed' | 'none'

/** What the watches between passes read: the pod in the sandbox run made. */
export interface RunSyncContext extends PodWaitContext {
  sandbox: SandboxContext
  /** The run's crash back-off: every pass uses this one. */
  backOff: BackOff
  images: ImageEnsurer
  settings: SyncSettings
  /** --settle (ms). */
  settleMs?: number
  /**
   * run --supervise: a supervisor takes the pod over once every container has started, so a container
   * that exits at once is its to restart with the crash back-off (CrashLoopBackOff), not the run's failure.
   */
  handOver?: boolean
  /** Every container has started and what is left is the settle window (the pod's --parallel slot is free). */
  started?: () => void
}

/** The first pause between polls: short, so quick containers are seen quickly. */
const FIRST_POLL_MS = 50
/** A pause that would end this close to the deadline is not started: the wait has failed. */
const DEADLINE_MARGIN_MS = 50
/** Passes made back to back before the run pauses between them anyway. */
const PASSES_WITHOUT_PAUSE = 3

export function throwIfInterrupted(signal: AbortSignal, object: string): void {
  if (signal.aborted) throw interrupted(object)
}

function interrupted(object: string): InterruptedError {
  return new InterruptedError(`run of pod ${object} was interrupted`)
}

/** SyncPod passes until the wait holds; resolves to the exit code with --wait completed, else null. */
export async function syncUntil(ctx: RunSyncContext, wait: WaitMode): Promise<number | null> {
  const ready = wait === 'ready' ? new ReadinessWatch(ctx, probeHost(ctx.pod, ctx.sandbox.ips ?? [])) : undefined
  try {
    return await passes(ctx, wait, ready)
  } catch (error) {
    throw ready ? ready.explain(error) : error
  } finally {
    await ready?.stop()
  }
}

/** A container whose restart waits out its crash back-off window. */
interface Blocked {
  start: ContainerToStart
  previous: ObservedContainer
  key: string
  delay: number
}

/** What the run sees after a pass: the pod observed, and what computePodActions would do next. */
interface View {
  actions: PodActions
  /** Every instance in the sandbox run made, newest first. */
  current: ObservedContainer[]
  newest(name: string, type: ContainerType): ObservedContainer | undefined
  now: number
}

async function passes(ctx: RunSyncContext, wait: WaitMode, ready: ReadinessWatch | undefined): Promise<number | null> {
  const announced = new Set<string>()
  const seen = new Set<string>()
  let due = true
  let backToBack = 0
  let pollMs = FIRST_POLL_MS
  let last: View | undefined
  for (;;) {
    throwIfInterrupted(ctx.signal, ctx.object)
    throwIfTerminating(ctx)
    const orCrashLoop = (error: unknown) => crashLoopAtDeadline(ctx, last, announced, error)
    // A pass that met a back-off window has said so (its BackOff event).
    const passAnnounced = due && (await pass(ctx).catch(orCrashLoop)).backOffUntil !== undefined
    const view = await look(ctx).catch(orCrashLoop)
    last = view
    markSeen(ctx.pod, view, seen, {handOver: ctx.handOver, settles: (ctx.settleMs ?? DEFAULT_SETTLE_MS) > 0})
    throwIfFailed(ctx, view.newest, wait, seen)
    const blocked = inBackOff(ctx, view.actions, view.now)
    if (passAnnounced) for (const {previous} of blocked) announced.add(previous.id)
    throwIfCrashLooping(ctx, blocked, announced, view.now)
    const held = await holds(ctx, wait, view, {seen, ready})
    if (held !== undefined) return held.exitCode

    due = passDue(view.actions, blocked, announced)
    backToBack = due ? backToBack + 1 : 0
    if (!due || backToBack > PASSES_WITHOUT_PAUSE) {
      const soonest = Math.min(...blocked.map(({delay}) => delay + 1))
      const atDeadline = () => initCrashLoop(ctx, view)
      await sleepWithin(ctx, Math.min(pollMs, soonest), waitingFor(wait, view.actions), atDeadline)
      pollMs = Math.min(pollMs * 2, ctx.pollMs)
    }
  }
}

/** One SyncPod pass, with the run's back-off, in the sandbox run made. */
async function pass(ctx: RunSyncContext): Promise<PodSyncResult> {
  const sandboxes = await podSandboxes(ctx.client, ctx.pod, {signal: ctx.signal})
  const result = await podWorkers.sync(ctx.pod, sandboxes, ctx.settings, {
    client: ctx.client,
    images: ctx.images,
    events: ctx.events,
    signal: ctx.signal,
    backOff: ctx.backOff,
    sandbox: ctx.sandbox,
    onStep: ctx.step,
  })
  if (result.failure) throw result.failure
  if (result.terminated) throw terminated(ctx, result.did.join('; '))
  return result
}

/**
 * The pod's termination was asked for while the run waits (another podctl's kill, a supervisor's
 * removed manifest): the run gives way, and whoever asked kills the pod as asked (run-pod.ts does not roll it back).
 */
function throwIfTerminating(ctx: RunSyncContext): void {
  const intent = readTermination(ctx.settings.podDirRoot, ctx.pod.uid)
  if (intent) throw terminated(ctx, `${intent.requestedBy} asked for its termination`)
}

function terminated(ctx: RunSyncContext, why: string): PodFailedError {
  return new PodFailedError(`pod ${ctx.object} was terminated while run waited for it: ${why}`, {reason: PodFailureReason.Terminated})
}

async function look(ctx: RunSyncContext): Promise<View> {
  const observed = await observePod(ctx.client, await podSandboxes(ctx.client, ctx.pod, {signal: ctx.signal}), {signal: ctx.signal})
  const now = Date.now()
  const current = observed.containers.filter((container) => container.podSandboxId === ctx.sandboxId)
  return {
    actions: computePodActions(ctx.pod, observed, {now}),
    current,
    newest: (name, type) => current.find((container) => container.name === name && container.type === type),
    now,
  }
}

/**
 * Sidecars and app containers seen running, or done: exited 0 under a policy that keeps them so, or
 * (handed over to a supervisor) exited under a policy that restarts them, which is its to do with the
 * crash back-off. A failure under restartPolicy Never is never restarted: that stays the run's failure.
 */
function markSeen(pod: PodModel, view: View, seen: Set<string>, {handOver = false, settles = false}): void {
  for (const {container, type, restartPolicy} of longRunningContainers(pod)) {
    const status = view.newest(container.name, type)
    const exited = status?.state === 'Exited'
    const done = exited && status.exitCode === 0 && restartPolicy !== 'Always'
    const restarted = exited && handOver && restartPolicy !== 'Never'
    // Started and already gone between two looks (CRI-O reports an exit at once): the settle window
    // judges it as one seen running, instead of the run restarting it with the back-off until --timeout.
    // Without a settle window (--settle 0) the run restarts it until it is seen running, as before.
    const crashedAtStart = settles && exited && status.startedAtMs !== null && restartPolicy !== 'Never'
    if (status?.state === 'Running' || done || restarted || crashedAtStart) seen.add(container.name)
  }
}

/** Whether the wait holds now (with --wait completed, the exit code), else undefined. */
async function holds(
  ctx: RunSyncContext,
  wait: WaitMode,
  view: View,
  {seen, ready}: {seen: ReadonlySet<string>; ready?: ReadinessWatch},
): Promise<{exitCode: number | null} | undefined> {
  const all = longRunningContainers(ctx.pod)
  const running = seen.size === all.length
  switch (wait) {
    case 'none': {
      // Every app container has been created (the init containers are done): what is left is not waited for.
      const created = ctx.pod.containers.every((container) => view.newest(container.name, 'app'))
      return created ? {exitCode: null} : undefined
    }

    case 'running': {
      if (!running) return undefined
      ctx.started?.()
      const ids = new Map(all.map(({container, type}) => [container.name, view.newest(container.name, type)?.id]))
      if (!ctx.handOver) await settleRunning(ctx, ids, ctx.settleMs ?? DEFAULT_SETTLE_MS)
      return {exitCode: null}
    }

    case 'ready': {
      return running && (await ready!.allReady(view.newest)) ? {exitCode: null} : undefined
    }

    case 'completed': {
      const exitCode = completedExitCode(ctx.pod, view.current)
      if (exitCode === undefined) {
        ctx.step('waiting for the containers to complete')
        return undefined
      }

      // As the kubelet kills a finished pod, its sidecars do not outlive the app containers.
      await stopSidecarsOfCompletedPod(ctx)
      return {exitCode}
    }
  }
}

/** An init container that failed under restartPolicy Never, or (before --wait running saw it run) an app container. */
function throwIfFailed(
  ctx: RunSyncContext,
  newest: (name: string, type: ContainerType) => ObservedContainer | undefined,
  wait: WaitMode,
  seen: ReadonlySet<string>,
): void {
  if (ctx.pod.restartPolicy !== 'Never') return
  for (const container of ctx.pod.initContainers.filter((candidate) => !isSidecar(candidate))) {
    const status = newest(container.name, 'init')
    if (status?.state !== 'Exited' || status.exitCode === 0) continue
    const reason = status.reason || 'Error'
    const message = `init container "${container.name}" exited with code ${status.exitCode} (${reason}) and restartPolicy is Never`
    throw new PodFailedError(message, {reason: initReason(reason), container: container.name})
  }

  // --wait completed reports an app container's exit; --wait running leaves one it saw run to the settle window.
  // --wait none returns once they are created: whether one has exited by the check is a race (a debug command that
  // ends at once on a loaded node), not a failure of the start, so an app container's exit is its status, as later.
  if (wait === 'completed' || wait === 'none') return
  for (const container of ctx.pod.containers) {
    const status = newest(container.name, 'app')
    if ((wait === 'running' && seen.has(container.name)) || status?.state !== 'Exited' || status.exitCode === 0) continue
    const reason = status.reason || 'Error'
    throw new PodFailedError(`container "${container.name}" exited with code ${status.exitCode} (${reason}) and restartPolicy is Never`, {
      reason,
      container: container.name,
    })
  }
}

/** The restarts computePodActions wants that the crash back-off holds back now (the kubelet's doBackOff, read only). */
function inBackOff(ctx: RunSyncContext, actions: PodActions, now: number): Blocked[] {
  const blocked: Blocked[] = []
  for (const start of [...actions.initContainersToStart, ...actions.containersToStart]) {
    const key = stableKey(ctx.pod, specOf(ctx.pod, start))
    const delay = restartDelay(ctx.backOff, key, start.backOffFrom, now)
    if (delay > 0) blocked.push({start, previous: start.backOffFrom!, key, delay})
  }

  return blocked
}

function specOf(pod: PodModel, start: ContainerToStart): ContainerModel {
  return (start.type === 'init' ? pod.initContainers : pod.containers).find((container) => container.name === start.name)!
}

/** A restart the back-off puts after --timeout (once its BackOff was announced): the kubelet's CrashLoopBackOff. */
function throwIfCrashLooping(ctx: RunSyncContext, blocked: readonly Blocked[], announced: ReadonlySet<string>, now: number): void {
  if (ctx.deadline === undefined) return
  for (const {start, previous, key, delay} of blocked) {
    if (!announced.has(previous.id) || now + delay < ctx.deadline) continue
    const described = podDescription(ctx.pod.name, ctx.pod.namespace, ctx.pod.uid)
    throw new PodFailedError(
      `back-off ${formatMs(ctx.backOff.window(key))} restarting failed container=${start.name} pod=${described}: ` +
        `it exited with code ${previous.exitCode ?? 'unknown'} and the next restart would come after --timeout`,
      {reason: PodFailureReason.CrashLoopBackOff, container: start.name},
    )
  }
}

/** How close to the deadline a runtime call that --timeout ended counts as the run's own end (the client's deadline may come first). */
const DEADLINE_SLACK_MS = 2000

/**
 * A runtime call that --timeout ended mid-pass: on a loaded machine the call, not the wait, meets the
 * deadline. The run then ends as the pod last stood, as the wait would have a moment later:
 * CrashLoopBackOff when a container was crash looping, else the call's DeadlineExceeded.
 */
function crashLoopAtDeadline(ctx: RunSyncContext, last: View | undefined, announced: ReadonlySet<string>, error: unknown): never {
  const atDeadline = ctx.deadline !== undefined && Date.now() >= ctx.deadline - DEADLINE_SLACK_MS
  if (!(error instanceof DeadlineExceededError) || !atDeadline || last === undefined) throw error
  // Taken at the deadline, as the call ended there: any restart still waiting comes after it.
  const at = Math.max(Date.now(), ctx.deadline!)
  throwIfCrashLooping(ctx, inBackOff(ctx, last.actions, at), announced, at)
  throw initCrashLoop(ctx, last) ?? error
}

/** An init container that was restarted and still runs when --timeout runs out: CrashLoopBackOff, with its last exit. */
function initCrashLoop(ctx: RunSyncContext, view: View): Error | undefined {
  const name = view.actions.waitingForInit
  const running = name === undefined ? undefined : view.newest(name, 'init')
  if (!name || !running || running.attempt === 0) return undefined
  const lastExit = view.current.find((status) => status.name === name && status.type === 'init' && status.state === 'Exited')
  const described = podDescription(ctx.pod.name, ctx.pod.namespace, ctx.pod.uid)
  const container = ctx.pod.initContainers.find((candidate) => candidate.name === name)!
  const times = `${running.attempt} time${running.attempt === 1 ? '' : 's'}`
  return new PodFailedError(
    `back-off ${formatMs(ctx.backOff.window(stableKey(ctx.pod, container)))} restarting failed container=${name} pod=${described}: ` +
      `it exited with code ${lastExit?.exitCode ?? 'unknown'} and was restarted ${times} before --timeout ran out`,
    {reason: PodFailureReason.CrashLoopBackOff, container: name},
  )
}

/**
 * Every app container done: under Never and OnFailure for good (OnFailure restarts a failure), under
 * Always at its first exit (the kubelet would restart it; podctl reports that exit). The first
 * failing one's exit code in spec order, 0 when all succeeded; undefined while one still runs.
 */
function completedExitCode(pod: PodModel, current: readonly ObservedContainer[]): number | undefined {
  const codes: number[] = []
  for (const container of pod.containers) {
    const instances = current.filter((status) => status.name === container.name && status.type === 'app')
    const exited = pod.restartPolicy === 'Always' ? instances.find((status) => status.state === 'Exited') : instances[0]
    if (exited?.state !== 'Exited') return undefined
    if (pod.restartPolicy === 'OnFailure' && exited.exitCode !== 0) return undefined
    codes.push(exited.exitCode ?? -1)
  }

  return codes.find((code) => code !== 0) ?? 0
}

/** Whether a pass has something to do: any action outside a back-off window, or a back-off not announced yet (its BackOff event). */
function passDue(actions: PodActions, blocked: readonly Blocked[], announced: Set<string>): boolean {
  if (actions.killPod || actions.createSandbox || actions.containersToKill.length > 0 || actions.waitingForInit) return true
  let due = false
  for (const start of [...actions.initContainersToStart, ...actions.containersToStart]) {
    const held = blocked.find((candidate) => candidate.start === start)
    if (!held) return true
    if (!announced.has(held.previous.id)) {
      announced.add(held.previous.id)
      due = true
    }
  }

  return due
}

function waitingFor(wait: WaitMode, actions: PodActions): string {
  if (actions.waitingForInit) return `init container "${actions.waitingForInit}"`
  if (wait === 'completed') return 'the containers to complete'
  if (wait === 'ready') return 'readiness'
  return 'containers to run'
}

/** Sleeps, but not past the deadline (DeadlineExceeded, or what `atDeadline` says) and not past an interrupt. */
async function sleepWithin(ctx: PodWaitContext, ms: number, waitingFor: string, atDeadline?: () => Error | undefined): Promise<void> {
  const {deadline} = ctx
  if (deadline !== undefined && Date.now() + Math.min(ms, DEADLINE_MARGIN_MS) >= deadline) {
    throw (
      atDeadline?.() ??
      new DeadlineExceededError(`pod ${ctx.object}: still waiting for ${waitingFor} when --timeout ran out; raise --timeout to wait longer`)
    )
  }

  await sleep(deadline === undefined ? ms : Math.min(ms, deadline - Date.now()), ctx.signal, interrupted(ctx.object).message)
}
