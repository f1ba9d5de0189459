import type {CriClient} from '../cri/client.js'
import {ExitCode, NotFoundError, PodctlError} from '../errors.js'
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {discardEvents, normalEvent, warningEvent, type EventSink} from '../kube/events.js'
import {ContainerAnnotation, ContainerLabel, podFullName} from '../kube/labels.js'
import {removeRecordedPodDirectory} from './pod-dirs.js'
import {newestFirst} from '../node/pods.js'
import {clampTimerSeconds} from '../util/duration.js'

/**
 * Killing a pod the kubelet's way (kuberuntime_manager.go killPodWithSyncResult and
 * kuberuntime_container.go killContainer), working only from what the runtime stores: grace
 * period and preStop hook come from the container annotations the kubelet (and `podctl run`)
 * write, so pods made by the kubelet or crictl are killed the same way.
 */

/** Kubernetes' default terminationGracePeriodSeconds. */
export const DEFAULT_GRACE_PERIOD_SECONDS = 30
/** The kubelet's minimumGracePeriodInSeconds: "always give containers a minimal shutdown window". */
export const MIN_GRACE_PERIOD_SECONDS = 2

export interface KillPodOptions {
  /** Override (--grace-period); else the container annotation io.kubernetes.pod.terminationGracePeriod; else 30. */
  gracePeriodSeconds?: number
  /** --force / --grace-period 0: no preStop, no 2 s minimum, StopContainer timeout 0 (SIGKILL at once). */
  force?: boolean
  /** Leave containers and sandboxes stopped (no Remove*), for debugging. */
  keep?: boolean
  /** Receives Killing / FailedPreStopHook events. */
  events?: EventSink
  signal?: AbortSignal
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
  durationMs: number
}

export interface KillContainerOptions extends Omit<KillPodOptions, 'keep' | 'containers'> {
  /** The pod's full name, for event objects and messages. */
  pod?: string
}

export interface KillContainerOutcome {
  containerId: string
  name: string
  /** False when the runtime no longer knew the container (NotFound counts as done). */
  stopped: boolean
  gracePeriodSeconds: number
  /** The timeout sent with StopContainer, after the preStop hook's time was subtracted. */
  stopTimeoutSeconds: number
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

/** The grace period the kubelet would use for this container (setTerminationGracePeriod, restored from annotations). */
export function gracePeriodFor(annotations: Readonly<Record<string, string>>, override?: number): number {
  if (override !== undefined) return clampTimerSeconds(Math.max(0, Math.floor(override)))
  const value = annotations[ContainerAnnotation.podTerminationGracePeriod]
  if (value !== undefined && /^\d+$/.test(value.trim())) return clampTimerSeconds(Number(value.trim()))
  return DEFAULT_GRACE_PERIOD_SECONDS
}

/**
 * StopContainer's timeout: the grace period minus the whole seconds the preStop hook took (the
 * kubelet truncates), never below 2 s unless forced; forced means 0 (the runtime kills at once).
 */
export function stopTimeoutSeconds(gracePeriodSeconds: number, elapsedMs: number, force = false): number {
  if (force) return 0
  const remaining = gracePeriodSeconds - Math.floor(Math.max(0, elapsedMs) / 1000)
  return Math.max(MIN_GRACE_PERIOD_SECONDS, remaining)
}

export type PreStopHook =
  | {type: 'exec'; command: string[]}
  /** httpGet, tcpSocket, sleep: podctl cannot run these from the runtime alone. */
  | {type: 'unsupported'; handler: string}
  | {type: 'invalid'; reason: string}

/** Parses the io.kubernetes.container.preStopHandler annotation (JSON of a Kubernetes LifecycleHandler). */
export function parsePreStopHandler(value: string | undefined): PreStopHook | undefined {
  if (value === undefined || value.trim() === '' || value.trim() === 'null') return undefined
  let handler: unknown
  try {
    handler = JSON.parse(value)
  } catch (error) {
    return {type: 'invalid', reason: `not JSON (${(error as Error).message})`}
  }

  if (typeof handler !== 'object' || handler === null || Array.isArray(handler)) {
    return {type: 'invalid', reason: 'not a LifecycleHandler object'}
  }

  const {exec, ...others} = handler as {exec?: {command?: unknown}}
  if (exec !== undefined && exec !== null) {
    const command = exec.command
    if (!Array.isArray(command) || command.length === 0 || !command.every((part) => typeof part === 'string')) {
      return {type: 'invalid', reason: 'exec.command must be a non-empty list of strings'}
    }

    return {type: 'exec', command}
  }

  const kinds = Object.keys(others).filter((key) => (others as Record<string, unknown>)[key] != null)
  if (kinds.length === 0) return undefined
  return {type: 'unsupported', handler: kinds.join(', ')}
}

export function containerName(container: Pick<Container, 'labels' | 'metadata'>): string {
  return container.labels[ContainerLabel.name] || container.metadata?.name || ''
}

/**
 * The kubelet's killContainer for one running container: Killing event, preStop hook via ExecSync
 * (waiting at most the grace period), then StopContainer with what is left of the grace period.
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

  events(normalEvent('Killing', `Stopping container ${name}`, object))

  const hook = parsePreStopHandler(container.annotations[ContainerAnnotation.preStopHandler])
  if (hook && grace > 0) {
    if (hook.type === 'exec') {
      const failure = await runPreStopExec(client, container.id, hook.command, grace, options.signal)
      if (failure) {
        events(
          warningEvent(
            'FailedPreStopHook',
            `Exec lifecycle hook (${JSON.stringify(hook.command)}) for Container "${name}" in Pod "${options.pod ?? container.podSandboxId}" failed - ${failure}`,
            object,
          ),
        )
      }
    } else if (hook.type === 'unsupported') {
      events(
        warningEvent('FailedPreStopHook', `PreStop hook (${hook.handler}) of container "${name}" skipped: podctl runs only exec hooks`, object),
      )
    } else {
      events(warningEvent('FailedPreStopHook', `PreStop hook annotation of container "${name}" ignored: ${hook.reason}`, object))
    }
  }

  const timeout = stopTimeoutSeconds(grace, performance.now() - started, force)
  let stopped = true
  try {
    await client.runtime(
      'stopContainer',
      {containerId: container.id, timeout: String(timeout)},
      // The runtime waits `timeout` seconds before SIGKILL; the call must outlive that (the kubelet adds its 2 m).
      {timeoutMs: client.deadlineFor('stopContainer') + timeout * 1000, signal: options.signal},
    )
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error
    stopped = false
  }

  return {containerId: container.id, name, stopped, gracePeriodSeconds: grace, stopTimeoutSeconds: timeout}
}

/**
 * Runs the preStop exec hook, waiting at most `graceSeconds` (the kubelet's executePreStopHook).
 * Resolves to a failure description, or undefined when the hook succeeded.
 */
async function runPreStopExec(
  client: CriClient,
  containerId: string,
  command: string[],
  graceSeconds: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const abort = new AbortController()
  const onParentAbort = () => abort.abort()
  signal?.addEventListener('abort', onParentAbort, {once: true})
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`error: hook did not complete within the grace period of ${graceSeconds}s`), graceSeconds * 1000)
  })
  const exec = client
    .runtime(
      'execSync',
      {containerId, cmd: command, timeout: String(graceSeconds)},
      // A little over the exec's own timeout so the runtime's answer, not our deadline, ends it.
      {timeoutMs: graceSeconds * 1000 + 5000, signal: abort.signal},
    )
    .then(
      (response) => {
        if (response.exitCode === 0) return undefined
        const output = Buffer.concat([response.stdout, response.stderr]).toString('utf8').trim()
        return `error: command exited with ${response.exitCode}, message: ${JSON.stringify(output)}`
      },
      (error: Error) => `error: ${error.message}`,
    )
  try {
    return await Promise.race([exec, timedOut])
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onParentAbort)
    abort.abort()
  }
}

/**
 * The kubelet's kill order for ONE pod: all running containers in parallel (preStop via ExecSync
 * within the grace period, then StopContainer with the remaining grace, never below 2 s unless
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
  const callOptions = {signal: options.signal}
  const failures: PodctlError[] = []
  const collect = (settled: PromiseSettledResult<unknown>[]) => {
    for (const outcome of settled) if (outcome.status === 'rejected') failures.push(asPodctlError(outcome.reason))
  }

  // Containers by sandbox ID only: a uid match could reach a newer sandbox of the same pod that the
  // caller did not ask to kill (e.g. `run --replace` creating attempt N+1).
  const ids = new Set(ordered.map((sandbox) => sandbox.id))
  const listed = options.containers ?? (await client.runtime('listContainers', {filter: {}}, callOptions)).containers
  const containers = listed.filter((container) => ids.has(container.podSandboxId))
  const running = containers.filter((container) => container.state === 'CONTAINER_RUNNING')

  const kills = await Promise.allSettled(running.map((container) => killContainer(client, container, {
      gracePeriodSeconds: options.gracePeriodSeconds,
      force: options.force,
      events: options.events,
      signal: options.signal,
      pod,
    })))
  collect(kills)
  const containersStopped = kills.filter((outcome) => outcome.status === 'fulfilled').length

  // Stop every sandbox even when some container kills failed (the kubelet does the same).
  const stops = await Promise.allSettled(
    ordered.map((sandbox) => ignoreNotFound(client.runtime('stopPodSandbox', {podSandboxId: sandbox.id}, callOptions))),
  )
  collect(stops)

  let removed = false
  if (!options.keep) {
    const removals = await Promise.allSettled(
      containers.map((container) => ignoreNotFound(client.runtime('removeContainer', {containerId: container.id}, callOptions))),
    )
    // The CRI requires StopPodSandbox before RemovePodSandbox: skip sandboxes that did not stop.
    const stoppedSandboxes = ordered.filter((_, index) => stops[index].status === 'fulfilled')
    const sandboxRemovals = await Promise.allSettled(
      stoppedSandboxes.map((sandbox) => ignoreNotFound(client.runtime('removePodSandbox', {podSandboxId: sandbox.id}, callOptions))),
    )
    collect(removals)
    collect(sandboxRemovals)
    removed =
      stoppedSandboxes.length === ordered.length && [...removals, ...sandboxRemovals].every((outcome) => outcome.status === 'fulfilled')
    // The pod's host directory (emptyDir volumes, /etc/hosts) goes with its last sandbox.
    if (removed) collect(await Promise.allSettled(ordered.map((sandbox) => removeRecordedPodDirectory(sandbox))))
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

async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error
  }
}

function asPodctlError(error: unknown): PodctlError {
  if (error instanceof PodctlError) return error
  return new PodctlError('InternalError', ExitCode.INTERNAL, String((error as Error)?.message ?? error))
}
