/**
 * Killing a pod the kubelet's way (kuberuntime_manager.go killPodWithSyncResult and
 * kuberuntime_container.go killContainer), working only from what the runtime stores: grace
 * period and preStop hook come from the container annotations the kubelet (and `podctl run`)
 * write, so pods made by the kubelet or crictl are killed the same way.
 */
import {rm} from 'node:fs/promises'

import type {CriClient} from '../../cri/client.js'
import {asPodctlError, NotFoundError, PodctlError, RuntimeError} from '../../errors.js'
import type {Container, PodSandbox} from '../../../generated/runtime/v1/api.js'
import {discardEvents, type EventSink, normalEvent} from '../../kube/events.js'
import {buildPodLogsDirectory, newestFirst, podFullName} from '../../kube/helpers.js'
import {containerName, gracePeriodFor} from '../../kube/labels.js'
import {removeContainerLogLinks} from './container-logs-links.js'
import {executePreStopHook} from '../lifecycle/hooks.js'
import {forgetRecordedPod, removeRecordedPodDirectory} from '../volumes/pod-dirs.js'
import {sandboxOwnership} from '../../kube/ownership.js'
import {TerminationOrdering} from '../core/termination-order.js'
import {removePodCgroups} from '../core/pod-cgroup.js'

/** The kubelet's minimumGracePeriodInSeconds: "always give containers a minimal shutdown window". */
const MIN_GRACE_PERIOD_SECONDS = 2

export interface KillPodOptions {
  /** Override (--grace-period); else the container annotation io.kubernetes.pod.terminationGracePeriod; else 30. */
  gracePeriodSeconds?: number
  /** --force / --grace-period 0: no preStop, no 2 s minimum, StopContainer timeout 0 (SIGKILL at once). */
  force?: boolean
  /** Leave containers and sandboxes stopped (no Remove*), for debugging. */
  keep?: boolean
  /** Receives Killing / FailedPreStopHook events. */
  events?: EventSink
  /**
   * Before the running containers are stopped (not with force): the longest a pod may now take, its
   * grace period (at least the 2 s minimum), so a waiting user is told why and for how long.
   */
  onGracePeriod?: (grace: {pod: string; seconds: number}) => void
  signal?: AbortSignal
  /** A rollback: its calls may outlive the command deadline (each still has its own). */
  cleanup?: boolean
  /**
   * Only pod directories under this root are removed (default $PODCTL_POD_DIR_ROOT, else /var/lib/podctl/pods),
   * and never one whose pod.json is the record of another runtime (record-owner.ts).
   */
  podDirRoot?: string
  /**
   * The pod lives on in a new sandbox (a recreation, attempt + 1): its directory and the data of
   * its volumes stay, as the kubelet tears a pod's volumes down only when the pod is deleted.
   */
  keepPodDirectory?: boolean
  /**
   * The root of the pod log directories: with it, a pod removed for good (not keepPodDirectory) loses
   * its <root>/<namespace>_<name>_<uid> directory too, as the kubelet's GC removes a deleted pod's logs.
   * Without it (rollbacks, whose message points at the logs) the logs stay.
   */
  podLogsRoot?: string
  /**
   * The user kills the pod (`kill`, the end of `run --supervise`): its pod.json goes first, so a
   * supervisor looking meanwhile does not restart or recreate what is being killed.
   */
  forget?: boolean
  /**
   * A ListContainers result to pick this pod's containers from, so killing many pods costs one
   * list call instead of one per pod. Listed when absent.
   */
  containers?: readonly Container[]
}

export interface KillPodResult {
  /** name_namespace */
  pod: string
  sandboxIds: string[]
  /** Running containers that this kill stopped (or that were already gone). */
  containersStopped: number
  /** True when every container and sandbox was removed (always false with keep). */
  removed: boolean
  /**
   * Set (true) only when the runtime had nothing of the pod and only its record was removed: its pod
   * directory (pod.json, back-off, volumes) and log directory (kill-records.ts). No sandboxes then.
   */
  recordOnly?: true
  durationMs: number
}

export interface KillContainerOptions extends Omit<KillPodOptions, 'keep' | 'containers'> {
  /** The pod's full name, for event objects and messages. */
  pod?: string
  /**
   * The pod kill this container is part of (killPod): after its preStop hook the container waits
   * for its turn (a sidecar, for the app containers and later sidecars), within its grace period.
   */
  ordering?: TerminationOrdering
}

export interface KillContainerOutcome {
  containerId: string
  name: string
  /** False when the runtime no longer knew the container (NotFound counts as done). */
  stopped: boolean
  gracePeriodSeconds: number
  /** The timeout sent with StopContainer, after the preStop hook's time and the wait for its turn were subtracted. */
  stopTimeoutSeconds: number
}

/** What a waiting user is told while a pod's containers have their grace period to stop (30 s by default). */
export function graceNotice({pod, seconds}: {pod: string; seconds: number}): string {
  return `waiting up to ${seconds}s for ${pod} to stop (its grace period; --force kills at once)`
}

/** Whole seconds, as the kubelet truncates a duration it takes out of a grace period. */
const wholeSeconds = (ms: number) => Math.floor(Math.max(0, ms) / 1000)

/**
 * What is left of the grace period after the preStop hook: the time a container may wait for its
 * turn (TerminationOrdering.waitForTurn); 0 or less means no wait.
 */
export function graceLeftAfterPreStop(gracePeriodSeconds: number, preStopMs: number, force = false): number {
  return force ? 0 : gracePeriodSeconds - wholeSeconds(preStopMs)
}

/**
 * StopContainer's timeout (the kubelet's killContainer): the grace period minus the whole seconds
 * the preStop hook took, then minus the whole seconds spent waiting for its turn (a sidecar waiting
 * for the app containers), never below 2 s unless forced; forced means 0 (the runtime kills at once).
 */
export function stopTimeoutSeconds(gracePeriodSeconds: number, preStopMs: number, force = false, waitedMs = 0): number {
  if (force) return 0
  let remaining = graceLeftAfterPreStop(gracePeriodSeconds, preStopMs)
  if (remaining > 0) remaining -= wholeSeconds(waitedMs)
  return Math.max(MIN_GRACE_PERIOD_SECONDS, remaining)
}

/**
 * The kubelet's killContainer for one running container: Killing event, preStop hook via ExecSync
 * (waiting at most the grace period), its turn in the pod's termination order if it has one (within
 * what is left of the grace period), then StopContainer with what is left of the grace period.
 */
export async function killContainer(
  client: CriClient,
  container: Container,
  options: KillContainerOptions = {},
): Promise<KillContainerOutcome> {
  const events = options.events ?? discardEvents
  const name = containerName(container)
  const object = options.pod ? `${options.pod}/${name}` : name
  const force = Boolean(options.force)
  const grace = force ? 0 : gracePeriodFor(container.annotations, options.gracePeriodSeconds)
  const started = performance.now()

  try {
    events(normalEvent('Killing', `Stopping container ${name}`, object))

    await executePreStopHook(client, container, {
      graceSeconds: grace,
      name,
      object,
      pod: options.pod ?? container.podSandboxId,
      events,
      signal: options.signal,
    })

    const preStopMs = performance.now() - started
    const left = graceLeftAfterPreStop(grace, preStopMs, force)
    const waitedMs = options.ordering ? await options.ordering.waitForTurn(container.id, left, options.signal) : 0
    const timeout = stopTimeoutSeconds(grace, preStopMs, force, waitedMs)
    let stopped = true
    try {
      await client.runtime(
        'stopContainer',
        {containerId: container.id, timeout: String(timeout)},
        // The runtime waits `timeout` seconds before SIGKILL; the call must outlive that (the kubelet adds its 2 m).
        {
          timeoutMs: client.deadlineFor('stopContainer', undefined, true) + timeout * 1000,
          signal: options.signal,
          cleanup: options.cleanup,
        },
      )
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
      stopped = false
    }

    return {containerId: container.id, name, stopped, gracePeriodSeconds: grace, stopTimeoutSeconds: timeout}
  } finally {
    // Stopped or failed, those waiting for it go on (the kubelet's deferred containerTerminated).
    options.ordering?.containerTerminated(container.id)
  }
}

/**
 * The kubelet's killContainersWithSyncResult: every running container of a pod killed at once, in
 * one termination order (termination-order.ts), so the pod takes one grace period: the app
 * containers stop within it, each sidecar after them (and after the sidecars declared after it),
 * within what is left of it, never below the 2 s minimum. preStop hooks all start at once, inside it.
 */
export async function killRunningContainers(
  client: CriClient,
  running: readonly Container[],
  options: Omit<KillContainerOptions, 'ordering'> = {},
): Promise<Array<PromiseSettledResult<KillContainerOutcome>>> {
  const ordering = new TerminationOrdering(running)
  return Promise.allSettled(running.map((container) => killContainer(client, container, {...options, ordering})))
}

/**
 * The kubelet's kill order for ONE pod: all running containers at once within one grace period,
 * sidecars after the app containers in reverse declaration order (killRunningContainers: preStop
 * within the grace period, then StopContainer with what is left of it, never below 2 s unless
 * force), then StopPodSandbox for every sandbox of the pod, then RemoveContainer/RemovePodSandbox
 * unless keep. NotFound counts as done. Every step runs even when an earlier one failed; failures
 * are thrown together as a KillPodError that still carries the result.
 */
export async function killPod(client: CriClient, sandboxes: PodSandbox[], options: KillPodOptions = {}): Promise<KillPodResult> {
  const started = performance.now()
  const ordered = [...sandboxes].sort(newestFirst)
  if (ordered.length === 0) throw new NotFoundError('killPod needs at least one pod sandbox')
  const newest = ordered[0]
  const pod = podFullName(newest.metadata?.name ?? '', newest.metadata?.namespace ?? '')
  const callOptions = {signal: options.signal, cleanup: options.cleanup}
  const failures: PodctlError[] = []
  const collect = (settled: PromiseSettledResult<unknown>[]) => {
    for (const outcome of settled) if (outcome.status === 'rejected') failures.push(asPodctlError(outcome.reason))
  }

  if (options.forget) await Promise.all(ordered.map((sandbox) => forgetRecordedPod(sandbox, options.podDirRoot, client.runtimeEndpoint)))
  // Containers by sandbox ID only: a uid match could reach a newer sandbox of the same pod that the
  // caller did not ask to kill (e.g. `run --replace` creating attempt N+1).
  const ids = new Set(ordered.map((sandbox) => sandbox.id))
  const listed = options.containers ?? (await client.runtime('listContainers', {filter: {}}, callOptions)).containers
  const containers = listed.filter((container) => ids.has(container.podSandboxId))
  const running = containers.filter((container) => container.state === 'CONTAINER_RUNNING')

  if (running.length > 0 && !options.force && options.onGracePeriod) {
    const graces = running.map((container) => gracePeriodFor(container.annotations, options.gracePeriodSeconds))
    options.onGracePeriod({pod, seconds: Math.max(MIN_GRACE_PERIOD_SECONDS, ...graces)})
  }

  // One grace period for all: app containers first, then sidecars in reverse declaration order.
  const kills = await killRunningContainers(client, running, {
    gracePeriodSeconds: options.gracePeriodSeconds,
    force: options.force,
    events: options.events,
    signal: options.signal,
    cleanup: options.cleanup,
    pod,
  })

  collect(kills)
  const containersStopped = kills.filter((outcome) => outcome.status === 'fulfilled').length

  // Stop every sandbox even when some container kills failed (the kubelet does the same).
  const stops = await Promise.allSettled(
    ordered.map((sandbox) => ignoreGone(client.runtime('stopPodSandbox', {podSandboxId: sandbox.id}, callOptions))),
  )
  collect(stops)

  let removed = false
  if (!options.keep) {
    const removals = await Promise.allSettled(
      containers.map((container) => ignoreGone(client.runtime('removeContainer', {containerId: container.id}, callOptions))),
    )
    // The CRI requires StopPodSandbox before RemovePodSandbox: skip sandboxes that did not stop.
    const stoppedSandboxes = ordered.filter((_, index) => stops[index].status === 'fulfilled')
    const sandboxRemovals = await Promise.allSettled(
      stoppedSandboxes.map((sandbox) => ignoreGone(client.runtime('removePodSandbox', {podSandboxId: sandbox.id}, callOptions))),
    )
    collect(removals)
    collect(sandboxRemovals)
    await removeContainerLogLinks(containers.filter((_, index) => removals[index].status === 'fulfilled'))
    removed =
      stoppedSandboxes.length === ordered.length && [...removals, ...sandboxRemovals].every((outcome) => outcome.status === 'fulfilled')
    const gone = [
      ...containers.filter((_, index) => removals[index].status === 'fulfilled'),
      ...stoppedSandboxes.filter((_, index) => sandboxRemovals[index].status === 'fulfilled'),
    ]
    await removeLeftCgroups(ordered, gone, removed && !options.keepPodDirectory)
    // The pod's host directory (emptyDir volumes, /etc/hosts) goes with its last sandbox.
    if (removed && !options.keepPodDirectory) {
      collect(
        await Promise.allSettled(ordered.map((sandbox) => removeRecordedPodDirectory(sandbox, options.podDirRoot, client.runtimeEndpoint))),
      )
      const logs = options.podLogsRoot === undefined ? [] : podLogDirectories(ordered, options.podLogsRoot)
      collect(await Promise.allSettled(logs.map(removeTree)))
    }
  }

  const result: KillPodResult = {
    pod,
    sandboxIds: ordered.map((sandbox) => sandbox.id),
    containersStopped,
    removed,
    durationMs: Math.round(performance.now() - started),
  }
  if (failures.length > 0) throw new KillPodError(result, failures)
  return result
}

/**
 * The pod cgroups (core/pod-cgroup.ts) of the removed containers and sandboxes of pods podctl made
 * (core/ownership.ts: a kubelet's pod cgroup is the kubelet's), and the pod's own once empty; when the
 * whole pod went (not a recreation keeping older attempts), whatever its earlier containers left too.
 * Never fails a kill.
 */
async function removeLeftCgroups(sandboxes: readonly PodSandbox[], removed: ReadonlyArray<{id: string}>, wholePod: boolean): Promise<void> {
  const uids = new Set(sandboxes.filter((sandbox) => sandboxOwnership(sandbox).ours).map((sandbox) => sandbox.metadata?.uid ?? ''))
  const ids = wholePod ? 'every container' : removed.map((object) => object.id)
  await Promise.all([...uids].map((uid) => removePodCgroups(uid, ids).catch(() => [])))
}

/**
 * The kubelet's log directories under `root` of the pod's sandboxes podctl made (core/ownership.ts:
 * a pod of crictl or a kubelet named in a kill leaves its logs, as crictl rmp does; a crictl config's
 * own log_directory is not podctl's to remove either).
 */
function podLogDirectories(sandboxes: readonly PodSandbox[], root: string): string[] {
  const paths = sandboxes.flatMap((sandbox) => {
    const pod = sandbox.metadata
    const named = pod?.uid && pod.name && pod.namespace
    return named && sandboxOwnership(sandbox).ours ? [buildPodLogsDirectory(root, pod.namespace, pod.name, pod.uid)] : []
  })
  return [...new Set(paths)]
}

async function removeTree(path: string): Promise<void> {
  await rm(path, {recursive: true, force: true})
}

/**
 * containerd's answer when another client (a second podctl kill, the kubelet) is removing the same
 * container or sandbox right now: "... is already in removing state". The object is going away,
 * which is what this kill wants.
 */
const BEING_REMOVED = /in removing state|is being removed/i

/** NotFound, or being removed by someone else, counts as done. */
async function ignoreGone(call: Promise<unknown>): Promise<void> {
  try {
    await call
  } catch (error) {
    if (error instanceof NotFoundError) return
    if (error instanceof RuntimeError && BEING_REMOVED.test(error.message)) return
    throw error
  }
}

/** One pod's kill that failed somewhere; `result` still says what was done, `causes` lists every failed step. */
export class KillPodError extends PodctlError {
  readonly result: KillPodResult
  readonly causes: PodctlError[]

  constructor(result: KillPodResult, causes: PodctlError[]) {
    const [first] = causes
    const more = causes.length > 1 ? ` (and ${causes.length - 1} more failure${causes.length > 2 ? 's' : ''})` : ''
    super(first.code, first.exitCode, `killing pod ${result.pod}: ${first.message}${more}`)
    this.result = result
    this.causes = causes
  }
}
