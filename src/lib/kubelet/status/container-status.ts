/**
 * The status manager's pure half: each container's status the way the kubelet's
 * convertToAPIContainerStatuses (kubelet_pods.go) builds it from the runtime's instances, and the
 * pod's readiness conditions (status/generate.go). A container that exited and that the policy
 * restarts is `Waiting` with reason CrashLoopBackOff while its crash back-off (backoff.json, kept
 * by the reconciler) holds, and its last state is then the instance that just exited; a finished
 * init container is terminated, Completed. No I/O: the termination messages are read by the caller.
 */
import {BackOff, type BackOffLadder} from '../../kube/backoff.js'
import {podDescription} from '../../kube/helpers.js'
import type {ContainerType, RestartPolicy} from '../../kube/labels.js'
import {formatGoDuration} from '../../util/duration.js'
import type {BackOffEntries} from '../config/desired-state.js'
import {policyRestarts} from '../kuberuntime/pod-actions.js'
import type {ContainerReport} from './pod-status.js'

/** The kubelet's ContainerStateTerminated (lastState.terminated), of one instance. */
export interface Termination {
  containerId: string
  exitCode: number
  reason: string
  /** The termination message, read by the caller (terminationMessagePath or the log tail). */
  message: string
  startedAt: string | null
  finishedAt: string | null
}

/** The kubelet's ContainerStateWaiting, with when a crash back-off ends. */
export interface Waiting {
  /** CrashLoopBackOff, PodInitializing or ContainerCreating. */
  reason: string
  /** For CrashLoopBackOff, the kubelet's `back-off 20s restarting failed container=c pod=web_default(uid)`. */
  message: string
  /** RFC 3339: when the back-off ends (the container's finishedAt + the window). */
  backOffUntil?: string
  /** Milliseconds from now until then. */
  backOffRemainingMs?: number
}

/** What the status needs from one container of the spec (the recorded pod, or the names the runtime holds). */
export interface StatusSpec {
  name: string
  type: ContainerType
  /** A restartable init container (restartPolicy Always): restarted whatever its exit code. */
  sidecar?: boolean
  hasReadinessProbe?: boolean
  hasStartupProbe?: boolean
  /** The crash back-off key (getStableKey); without it (no recorded pod) no back-off is known. */
  backOffKey?: string
}

export interface StatusInput {
  pod: {name: string; namespace: string; uid: string}
  restartPolicy: RestartPolicy
  specs: readonly StatusSpec[]
  /** Every instance of every container, newest first (getPodStatus). */
  instances: readonly ContainerReport[]
  newestSandbox?: {id: string; ready: boolean}
  /** Readiness a live supervisor's prober recorded, by container name. */
  recorded?: Readonly<Record<string, {ready: boolean; started: boolean}>>
  /** IDs of running containers an in-process prober has just seen ready (`status --wait-for ready`). */
  probedReady?: ReadonlySet<string>
  /** The pod's crash back-off entries (backoff.json) and the ladder they were made with. */
  backOff?: {entries: BackOffEntries; ladder: BackOffLadder}
  /** Epoch ms. */
  now: number
}

export interface ContainerStatusView {
  name: string
  type: ContainerType
  sidecar: boolean
  ready: boolean
  started: boolean
  restartCount: number
  /** The newest instance's state, `Waiting` when there is none or it waits out a crash back-off. */
  state: ContainerReport['state'] | 'Waiting'
  waiting: Waiting | null
  /** The current instance's end, when it exited and is not waiting to restart. */
  terminated: Termination | null
  /** The previous attempt's end: the newest exited instance before the current one. */
  lastState: Termination | null
}

export type ConditionType = 'PodScheduled' | 'Initialized' | 'ContainersReady' | 'Ready'

/** Whether the kubelet would start this container again after it exited with `exitCode`. */
export function restartsAfterExit(spec: StatusSpec, exitCode: number | null, policy: RestartPolicy): boolean {
  if (spec.type === 'init' && spec.sidecar) return true
  if (spec.type === 'init') return exitCode !== 0 && policy !== 'Never'
  return policyRestarts(policy, exitCode)
}

function termination(instance: ContainerReport): Termination {
  const exitCode = instance.exitCode ?? -1
  return {
    containerId: instance.id,
    exitCode,
    reason: instance.reason || (exitCode === 0 ? 'Completed' : 'Error'),
    message: '',
    startedAt: instance.startedAt,
    finishedAt: instance.finishedAt,
  }
}

/** The kubelet's doBackOff, read back: CrashLoopBackOff while the window opened for the exited instance holds. */
export function crashLoopBackOff(spec: StatusSpec, exited: ContainerReport, input: StatusInput): Waiting | null {
  const {backOff, newestSandbox} = input
  if (!spec.backOffKey || !backOff || exited.state !== 'Exited' || exited.finishedAt === null) return null
  // A stopped sandbox restarts nothing (the pod is terminal); an instance of an older sandbox is not the current one.
  if (!newestSandbox?.ready || exited.podSandboxId !== newestSandbox.id) return null
  if (!restartsAfterExit(spec, exited.exitCode, input.restartPolicy)) return null
  const entry = backOff.entries[spec.backOffKey]
  if (!entry) return null
  const ladder = new BackOff({...backOff.ladder, now: () => input.now})
  ladder.restore({[spec.backOffKey]: entry})
  const finishedAtMs = Date.parse(exited.finishedAt)
  const remaining = ladder.delaySince(spec.backOffKey, finishedAtMs, input.now)
  if (remaining <= 0) return null
  const window = ladder.window(spec.backOffKey)
  const pod = podDescription(input.pod.name, input.pod.namespace, input.pod.uid)
  return {
    reason: 'CrashLoopBackOff',
    message: `back-off ${formatGoDuration(window)} restarting failed container=${spec.name} pod=${pod}`,
    backOffUntil: new Date(finishedAtMs + window).toISOString(),
    backOffRemainingMs: remaining,
  }
}

/** One container's status: state (waiting/running/terminated), last state, readiness. */
export function containerStatusOf(spec: StatusSpec, input: StatusInput): ContainerStatusView {
  const instances = input.instances.filter((c) => c.name === spec.name && c.type === spec.type)
  const current = instances.find((c) => c.podSandboxId === input.newestSandbox?.id) ?? instances[0]
  const base = {name: spec.name, type: spec.type, sidecar: spec.sidecar ?? false, restartCount: current?.attempt ?? 0}
  if (!current) {
    // generateAPIPodStatus' default waiting state: PodInitializing in a pod with init containers, else ContainerCreating.
    const reason = input.specs.some((s) => s.type === 'init') ? 'PodInitializing' : 'ContainerCreating'
    return {...base, ready: false, started: false, state: 'Waiting', waiting: {reason, message: ''}, terminated: null, lastState: null}
  }

  const backOff = crashLoopBackOff(spec, current, input)
  if (backOff) {
    // convertToAPIContainerStatuses: the terminated state of a container about to be restarted becomes its last state.
    return {...base, ready: false, started: false, state: 'Waiting', waiting: backOff, terminated: null, lastState: termination(current)}
  }

  const previous = instances.find((c) => c !== current && c.state === 'Exited')
  const lastState = previous ? termination(previous) : null
  if (current.state === 'Exited') {
    const terminated = termination(current)
    // The prober's UpdatePodStatus: an init container that completed is ready.
    const ready = spec.type === 'init' && !spec.sidecar && terminated.exitCode === 0
    return {...base, ready, started: false, state: 'Exited', waiting: null, terminated, lastState}
  }

  if (current.state !== 'Running') {
    const waiting = current.state === 'Created' ? {reason: 'ContainerCreating', message: ''} : null
    return {...base, ready: false, started: false, state: current.state, waiting, terminated: null, lastState}
  }

  const record = input.recorded?.[spec.name]
  let started = !spec.hasStartupProbe
  let ready = started && !spec.hasReadinessProbe
  if (input.probedReady?.has(current.id)) [started, ready] = [true, true]
  else if (record) [started, ready] = [record.started, record.started && record.ready]
  return {...base, ready, started, state: 'Running', waiting: null, terminated: null, lastState}
}

/**
 * The pod's conditions from its container statuses: ContainersReady when every app container and
 * sidecar is ready, Ready the same (podctl keeps no readiness gates: the manifest's are dropped
 * with a warning) on a ready sandbox, Initialized once the init containers ran and an app container exists.
 */
export function podConditionsOf(
  statuses: readonly ContainerStatusView[],
  sandboxReady: boolean,
): Array<{type: ConditionType; status: boolean}> {
  // A container that never ran waits with no last state; one in back-off has the instance that exited.
  const exists = (c: ContainerStatusView) => !(c.state === 'Waiting' && c.lastState === null)
  const apps = statuses.filter((c) => c.type === 'app')
  const inits = statuses.filter((c) => c.type === 'init')
  const initialized = inits.every((c) => exists(c)) && apps.some((c) => exists(c))
  const counted = [...apps, ...inits.filter((c) => c.sidecar)]
  const containersReady = apps.length > 0 && counted.every((c) => c.ready)
  return [
    {type: 'PodScheduled', status: true},
    {type: 'Initialized', status: initialized},
    {type: 'ContainersReady', status: containersReady},
    {type: 'Ready', status: containersReady && sandboxReady},
  ]
}

/** The STATE column of `status POD`: `Running`, `Waiting: CrashLoopBackOff (12s left)`, `Terminated: Completed (exit 0)`. */
export function describeContainerState(c: Pick<ContainerStatusView, 'state' | 'waiting' | 'terminated'>): string {
  if (c.waiting) {
    const ms = c.waiting.backOffRemainingMs
    return `Waiting: ${c.waiting.reason}${ms === undefined ? '' : ` (${formatGoDuration(Math.ceil(ms / 1000) * 1000)} left)`}`
  }

  if (c.terminated) return `Terminated: ${c.terminated.reason} (exit ${c.terminated.exitCode})`
  return c.state
}
