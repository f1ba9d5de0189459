/**
 * One container at a time, the kubelet's way (`podctl start`, `stop`, `rm`): start runs the
 * postStart hook `create` recorded (a failing hook kills the container, PostStartHookError), stop
 * is the kubelet's killContainer (preStop within the grace period, then StopContainer), rm removes
 * the container and, as the kubelet does, its log files.
 */
import {readdir, rm} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import {asPodctlError, NotFoundError, type PodctlError, RuntimeError} from '../../errors.js'
import type {Container} from '../../../generated/runtime/v1/api.js'
import {discardEvents, type EventSink, normalEvent, warningEvent} from '../../kube/events.js'
import {shortId, toKubeContainerState} from '../../kube/helpers.js'
import {ContainerAnnotation, containerName, PodLabel} from '../../kube/labels.js'
import {settleLimit} from '../../util/concurrency.js'
import {runPostStartHook} from '../lifecycle/hooks.js'
import {killContainer} from './kill.js'
import {PodFailedError, PodFailureReason} from '../core/reasons.js'
import {isPodctlContainer} from '../../kube/ownership.js'
import {removeContainerLogLinks} from './container-logs-links.js'

export interface ContainerOutcome<T> {
  items: T[]
  failures: Array<{ref: string; error: PodctlError}>
}

/** `fn` for every container, `parallel` at once; each failure is kept with the container's ID, the others go on. */
export async function forEachContainer<T>(
  containers: readonly Container[],
  parallel: number,
  fn: (container: Container) => Promise<T>,
): Promise<ContainerOutcome<T>> {
  const settled = await settleLimit(containers, parallel, fn)
  const outcome: ContainerOutcome<T> = {items: [], failures: []}
  for (const [index, result] of settled.entries()) {
    if (result.status === 'fulfilled') outcome.items.push(result.value)
    else outcome.failures.push({ref: containers[index].id, error: asPodctlError(result.reason)})
  }

  return outcome
}

/** `name (abc123def456)` for messages. */
function label(container: Container): string {
  const name = containerName(container)
  return `${name ? `${name} ` : ''}(${shortId(container.id)})`
}

function stateOf(container: Container): string {
  return toKubeContainerState(container.state).toLowerCase()
}

/** `name_namespace/container`, the object of events. */
function objectOf(container: Container): string {
  const pod = container.labels[PodLabel.name]
  const namespace = container.labels[PodLabel.namespace]
  return pod && namespace ? `${pod}_${namespace}/${containerName(container)}` : containerName(container) || shortId(container.id)
}

export interface StartedResult {
  containerId: string
  name: string
  /** Whether a recorded postStart hook ran (and succeeded). */
  postStart: boolean
}

/** StartContainer for a created container, then its recorded postStart exec hook. */
export async function startCreatedContainer(
  client: CriClient,
  container: Container,
  options: {events?: EventSink; deadline?: number; signal?: AbortSignal} = {},
): Promise<StartedResult> {
  const events = options.events ?? discardEvents
  const name = containerName(container)
  if (container.state !== 'CONTAINER_CREATED') {
    throw new RuntimeError(
      `container ${label(container)} is ${stateOf(container)}; only a created container can be started (make a new one with podctl create)`,
    )
  }

  await client.runtime('startContainer', {containerId: container.id})
  events(normalEvent('Started', `Started container ${name}`, objectOf(container)))
  const command = postStartCommand(container)
  if (!command) return {containerId: container.id, name, postStart: false}
  const failure = await runPostStartHook(client, container.id, command, {deadline: options.deadline, signal: options.signal})
  if (failure === undefined) return {containerId: container.id, name, postStart: true}
  events(warningEvent('FailedPostStartHook', 'PostStartHook failed', objectOf(container)))
  // The kubelet kills a container whose postStart hook failed.
  await killContainer(client, {...container, state: 'CONTAINER_RUNNING' as Container['state']}, {events, force: true}).catch(() => {})
  throw new PodFailedError(
    `Exec lifecycle hook ([${command.join(' ')}]) for Container "${name}" failed - error: ${failure}; it was killed`,
    {
      reason: PodFailureReason.PostStartHookError,
      container: name,
      containerId: container.id,
    },
  )
}

/** The exec command of the postStart hook `podctl create` recorded, if any. */
export function postStartCommand(container: Pick<Container, 'annotations'>): string[] | undefined {
  const text = container.annotations[ContainerAnnotation.postStartHandler]
  if (!text) return undefined
  try {
    const command = (JSON.parse(text) as {exec?: {command?: unknown}})?.exec?.command
    return Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === 'string') ? command : undefined
  } catch {
    return undefined
  }
}

export interface StoppedResult {
  containerId: string
  name: string
  /** False when it was not running (nothing to stop). */
  stopped: boolean
  gracePeriodSeconds: number
}

/**
 * The kubelet's killContainer for a running container (preStop hook, then StopContainer with what
 * is left of the grace period: `gracePeriodSeconds`, else its recorded terminationGracePeriod; 0
 * kills at once with no hook). A container that is not running has nothing to stop.
 */
export async function stopOneContainer(
  client: CriClient,
  container: Container,
  options: {gracePeriodSeconds?: number; events?: EventSink; signal?: AbortSignal} = {},
): Promise<StoppedResult> {
  const name = containerName(container)
  if (container.state !== 'CONTAINER_RUNNING') return {containerId: container.id, name, stopped: false, gracePeriodSeconds: 0}
  const force = options.gracePeriodSeconds === 0
  const outcome = await killContainer(client, container, {
    gracePeriodSeconds: options.gracePeriodSeconds,
    force,
    events: options.events,
    signal: options.signal,
    pod: objectOf(container).split('/')[0],
  })
  return {containerId: container.id, name, stopped: outcome.stopped, gracePeriodSeconds: outcome.gracePeriodSeconds}
}

export interface RemovedResult {
  containerId: string
  name: string
  /** Stopped first (--force on a running container). */
  stopped: boolean
  /** Log files deleted. */
  logsRemoved: string[]
}

/**
 * RemoveContainer; a running container is refused unless `force` (then killed at once, as crictl
 * rm -f does). Its log file and rotations are deleted unless keepLogs, as the kubelet's
 * removeContainerLog and crictl rm do.
 */
export async function removeOneContainer(
  client: CriClient,
  container: Container,
  options: {force?: boolean; keepLogs?: boolean; events?: EventSink} = {},
): Promise<RemovedResult> {
  const name = containerName(container)
  let stopped = false
  if (container.state === 'CONTAINER_RUNNING') {
    if (!options.force) {
      throw new RuntimeError(
        `container ${label(container)} is running; stop it first (podctl stop ${shortId(container.id)}) or pass --force`,
      )
    }

    stopped = (await killContainer(client, container, {force: true, events: options.events})).stopped
  }

  const logPath = options.keepLogs ? undefined : await logPathOf(client, container)
  // The log first, as the kubelet's removeContainer: a log that cannot be removed keeps the container (the error says why).
  const logsRemoved = logPath ? await removeLogFiles(logPath) : []
  try {
    await client.runtime('removeContainer', {containerId: container.id})
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error
  }

  // Its /var/log/containers link, as the kubelet's removeContainer removes it; only podctl's: a kubelet's links are its own.
  if (isPodctlContainer(container)) await removeContainerLogLinks([container])
  return {containerId: container.id, name, stopped, logsRemoved}
}

async function logPathOf(client: CriClient, container: Container): Promise<string | undefined> {
  try {
    const {status} = await client.runtime('containerStatus', {containerId: container.id, verbose: false})
    return status?.logPath || undefined
  } catch (error) {
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}

/** The log file and its rotations (`<file>.<timestamp>`, `.gz`); files that are already gone are fine. */
export async function removeLogFiles(logPath: string): Promise<string[]> {
  const directory = dirname(logPath)
  const file = basename(logPath)
  const entries = await readdir(directory).catch(() => [] as string[])
  const doomed = entries.filter((entry) => entry === file || entry.startsWith(`${file}.`)).map((entry) => join(directory, entry))
  await Promise.all(doomed.map((path) => rm(path, {force: true})))
  return doomed
}
