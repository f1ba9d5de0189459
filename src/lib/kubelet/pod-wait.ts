/**
 * The waits of `podctl run` (podctl's own: the kubelet never waits, it syncs again): an init
 * container to successful completion, `--wait running` and `--wait completed`. Exited containers
 * are restarted per restartPolicy after the kubelet's crash back-off (doBackOff), and a container
 * that keeps failing until --timeout ends as CrashLoopBackOff.
 */
import type {CriClient} from '../cri/client.js'
import {DeadlineExceededError, formatMs, InterruptedError, NotFoundError, type PodctlError} from '../errors.js'
import type {ContainerModel, PodModel} from '../manifest/model.js'
import type {ContainerStatus} from '../../generated/runtime/v1/api.js'
import type {BackOff} from '../kube/backoff.js'
import {type EventSink, warningEvent} from '../kube/events.js'
import {newestFirst, podDescription, stableKey} from '../kube/helpers.js'
import type {ContainerType} from '../kube/labels.js'
import {sleep} from '../util/concurrency.js'
import {nanosToMs} from '../util/time.js'
import {containerObject} from './container.js'
import {removeContainerLogLinks} from './container-logs-links.js'
import {initReason, PodFailedError, PodFailureReason} from './reasons.js'
import {longRunningContainers} from './sidecars.js'

/** The newest instance podctl started of a container. */
export interface TrackedContainer {
  id: string
  attempt: number
  type: ContainerType
}

export interface PodWaitContext {
  client: CriClient
  pod: PodModel
  sandboxId: string
  /** By container name; start() keeps it current. */
  tracked: ReadonlyMap<string, TrackedContainer>
  backOff: BackOff
  events: EventSink
  /** Epoch ms: the run's deadline (--timeout). */
  deadline?: number
  /** The longest pause between two polls (ms). */
  pollMs: number
  signal: AbortSignal
  /** The pod in messages: name_namespace. */
  object: string
  step(text: string): void
  /** Starts a new instance of the container, tracked like the first; resolves to its ID. */
  start(container: ContainerModel, type: ContainerType, attempt: number): Promise<string>
}

/** The first pause between polls: short, so quick containers are seen quickly. */
const FIRST_POLL_MS = 50
/** A pause that would end this close to the deadline is not started: the wait has failed. */
const DEADLINE_MARGIN_MS = 50

export function throwIfInterrupted(signal: AbortSignal, object: string): void {
  if (signal.aborted) throw interrupted(object)
}

function interrupted(object: string): InterruptedError {
  return new InterruptedError(`run of pod ${object} was interrupted`)
}

/** Step 4: one started init container to successful completion, restarted per restartPolicy with the crash back-off. */
export async function completeInitContainer(
  ctx: PodWaitContext,
  container: ContainerModel,
  first: {id: string; attempt: number},
): Promise<void> {
  let {id, attempt} = first
  let restarts = 0
  let lastExit: ContainerStatus | undefined
  for (;;) {
    ctx.step(`waiting for init container ${container.name}`)
    const status = await waitForExit(ctx, id, `init container "${container.name}"`).catch((error: unknown) => {
      throw restarts > 0 && error instanceof DeadlineExceededError ? crashLoop(ctx, container, lastExit, restarts) : error
    })
    if (status.exitCode === 0) return
    const reason = status.reason || 'Error'
    if (ctx.pod.restartPolicy === 'Never') {
      const message = `init container "${container.name}" exited with code ${status.exitCode} (${reason}) and restartPolicy is Never`
      throw new PodFailedError(message, {reason: initReason(reason), container: container.name})
    }

    await backOffBeforeRestart(ctx, container, status)
    attempt++
    restarts++
    lastExit = status
    await pruneExited(ctx, container.name)
    id = await ctx.start(container, 'init', attempt)
  }
}

/** --wait running: every sidecar and app container running; ones that already exited are restarted per restartPolicy (crash back-off). */
export async function waitRunning(ctx: PodWaitContext): Promise<void> {
  const done = new Set<string>()
  let pollMs = FIRST_POLL_MS
  for (;;) {
    throwIfInterrupted(ctx.signal, ctx.object)
    const states = await appContainerStates(ctx)
    let pending = false
    const all = longRunningContainers(ctx.pod)
    for (const {container, type, restartPolicy: policy} of all) {
      if (done.has(container.name)) continue
      const tracked = ctx.tracked.get(container.name)!
      const state = states.get(tracked.id)
      if (state === 'CONTAINER_RUNNING') {
        done.add(container.name)
        continue
      }

      if (state !== 'CONTAINER_EXITED') {
        pending = true
        continue
      }

      const status = await containerStatus(ctx, tracked.id)
      const exitCode = status?.exitCode ?? -1
      const reason = status?.reason || (exitCode === 0 ? 'Completed' : 'Error')
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

      await backOffBeforeRestart(ctx, container, status)
      await pruneExited(ctx, container.name)
      await ctx.start(container, type, tracked.attempt + 1)
      pending = true
    }

    if (!pending && done.size === all.length) return
    await sleepWithin(ctx, pollMs, 'containers to run')
    pollMs = Math.min(pollMs * 2, ctx.pollMs)
  }
}

/**
 * --wait completed: every app container exits; resolves to the first failing one's exit code (spec
 * order), 0 when all succeeded. Only OnFailure restarts failed ones (with the crash back-off):
 * under Always a pod never completes, so podctl reports the first exit.
 */
export async function waitCompleted(ctx: PodWaitContext): Promise<number> {
  const exitCodes = new Map<string, number>()
  let pollMs = FIRST_POLL_MS
  for (;;) {
    throwIfInterrupted(ctx.signal, ctx.object)
    ctx.step('waiting for the containers to complete')
    const states = await appContainerStates(ctx)
    for (const container of ctx.pod.containers) {
      if (exitCodes.has(container.name)) continue
      const tracked = ctx.tracked.get(container.name)!
      if (states.get(tracked.id) !== 'CONTAINER_EXITED') continue
      const status = await containerStatus(ctx, tracked.id)
      const exitCode = status?.exitCode ?? -1
      if (exitCode !== 0 && ctx.pod.restartPolicy === 'OnFailure') {
        await backOffBeforeRestart(ctx, container, status)
        await pruneExited(ctx, container.name)
        await ctx.start(container, 'app', tracked.attempt + 1)
        continue
      }

      exitCodes.set(container.name, exitCode)
    }

    if (exitCodes.size === ctx.pod.containers.length) {
      return ctx.pod.containers.map((container) => exitCodes.get(container.name)!).find((code) => code !== 0) ?? 0
    }

    await sleepWithin(ctx, pollMs, 'the containers to complete')
    pollMs = Math.min(pollMs * 2, ctx.pollMs)
  }
}

/**
 * The kubelet's doBackOff: wait out the crash back-off window (BackOff event), or fail with
 * CrashLoopBackOff when it ends after the deadline.
 */
export async function backOffBeforeRestart(
  ctx: PodWaitContext,
  container: ContainerModel,
  status: ContainerStatus | undefined,
): Promise<void> {
  const key = stableKey(ctx.pod, container)
  const finishedAt = status?.finishedAt && status.finishedAt !== '0' ? nanosToMs(status.finishedAt) : Date.now()
  const delay = ctx.backOff.delaySince(key, finishedAt)
  if (delay > 0) {
    const described = podDescription(ctx.pod.name, ctx.pod.namespace, ctx.pod.uid)
    const message = `Back-off restarting failed container ${container.name} in pod ${described}`
    ctx.events(warningEvent('BackOff', message, containerObject(ctx.pod, container)))
    if (ctx.deadline !== undefined && Date.now() + delay >= ctx.deadline) {
      throw new PodFailedError(
        `back-off ${formatMs(ctx.backOff.window(key))} restarting failed container=${container.name} pod=${described}: ` +
          `it exited with code ${status?.exitCode ?? 'unknown'} and the next restart would come after --timeout`,
        {reason: PodFailureReason.CrashLoopBackOff, container: container.name},
      )
    }

    ctx.step(`back-off ${formatMs(Math.ceil(delay / 1000) * 1000)} before restarting ${container.name}`)
    await sleepWithin(ctx, delay, `the back-off of ${container.name}`)
  }

  ctx.backOff.next(key, finishedAt)
}

/** A container that keeps failing until --timeout: the kubelet's CrashLoopBackOff, with its last exit. */
function crashLoop(ctx: PodWaitContext, container: ContainerModel, lastExit: ContainerStatus | undefined, restarts: number): PodctlError {
  const described = podDescription(ctx.pod.name, ctx.pod.namespace, ctx.pod.uid)
  const window = formatMs(ctx.backOff.window(stableKey(ctx.pod, container)))
  const times = `${restarts} time${restarts === 1 ? '' : 's'}`
  return new PodFailedError(
    `back-off ${window} restarting failed container=${container.name} pod=${described}: ` +
      `it exited with code ${lastExit?.exitCode ?? 'unknown'} and was restarted ${times} before --timeout ran out`,
    {reason: PodFailureReason.CrashLoopBackOff, container: container.name},
  )
}

async function waitForExit(ctx: PodWaitContext, containerId: string, what: string): Promise<ContainerStatus> {
  let pollMs = FIRST_POLL_MS
  for (;;) {
    throwIfInterrupted(ctx.signal, ctx.object)
    const status = await containerStatus(ctx, containerId)
    const missing = `${what} disappeared from the runtime while podctl waited for it`
    if (!status) throw new PodFailedError(missing, {reason: PodFailureReason.ContainerMissing})

    if (status.state === 'CONTAINER_EXITED') return status
    await sleepWithin(ctx, pollMs, what)
    pollMs = Math.min(pollMs * 2, ctx.pollMs)
  }
}

export async function containerStatus(ctx: PodWaitContext, containerId: string): Promise<ContainerStatus | undefined> {
  try {
    return (await ctx.client.runtime('containerStatus', {containerId, verbose: false}, {signal: ctx.signal})).status
  } catch (error) {
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}

/** One ListContainers for the sandbox: id → state. */
async function appContainerStates(ctx: PodWaitContext): Promise<Map<string, string>> {
  const {containers} = await ctx.client.runtime('listContainers', {filter: {podSandboxId: ctx.sandboxId}}, {signal: ctx.signal})
  return new Map(containers.map((container) => [container.id, container.state]))
}

/** Before a restart, keep only the newest exited instance of the container (pruneInitContainersBeforeStart / container GC). */
export async function pruneExited(ctx: PodWaitContext, name: string): Promise<void> {
  const {client} = ctx
  const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: ctx.sandboxId}}, {signal: ctx.signal})
  const exited = containers
    .filter((c) => c.metadata?.name === name && c.state === 'CONTAINER_EXITED')
    .sort(newestFirst)
    .slice(1)
  await Promise.all(
    exited.map((c) =>
      client.runtime('removeContainer', {containerId: c.id}).then(
        () => removeContainerLogLinks([c]),
        () => {},
      ),
    ),
  )
}

/** Sleeps, but not past the deadline (DeadlineExceeded) and not past an interrupt. */
export async function sleepWithin(ctx: PodWaitContext, ms: number, waitingFor: string): Promise<void> {
  const {deadline} = ctx
  if (deadline !== undefined && Date.now() + Math.min(ms, DEADLINE_MARGIN_MS) >= deadline) {
    throw new DeadlineExceededError(
      `pod ${ctx.object}: still waiting for ${waitingFor} when --timeout ran out; raise --timeout to wait longer`,
    )
  }

  await sleep(deadline === undefined ? ms : Math.min(ms, deadline - Date.now()), ctx.signal, interrupted(ctx.object).message)
}
