/**
 * The kubelet's computePodActions (pkg/kubelet/kuberuntime/kuberuntime_manager.go) as a pure
 * function: what should run (the recorded pod) against what runs (the runtime's sandboxes and
 * containers, and the prober's liveness/startup failures) gives what SyncPod must do — kill or
 * create the sandbox (attempt + 1), which init container and sidecars to start, which app
 * containers to start or kill. SyncPod (sync-pod.ts) carries the actions out.
 */
import type {KubeContainerState} from '../../kube/helpers.js'
import {containerHash, type ContainerType, type RestartPolicy} from '../../kube/labels.js'
import type {ContainerModel, PodModel} from '../../manifest/model.js'

export interface ObservedSandbox {
  id: string
  attempt: number
  ready: boolean
  /** Whether the runtime reported an IP (always true for host-network pods). */
  hasIp: boolean
  /** The pod IP when the sandbox has one (probes from the node go there). */
  ip?: string
  /** Epoch ms. */
  createdAtMs: number
}

export interface ObservedContainer {
  id: string
  name: string
  type: ContainerType
  podSandboxId: string
  state: KubeContainerState
  /** ContainerMetadata.attempt: the restart count. */
  attempt: number
  /** io.kubernetes.container.hash as recorded at creation. */
  hash: string
  exitCode: number | null
  reason: string
  startedAtMs: number | null
  finishedAtMs: number | null
}

export interface ObservedPod {
  /** Newest first. */
  sandboxes: ObservedSandbox[]
  /** Every instance of every container, newest first. */
  containers: ObservedContainer[]
}

export type KillReason = 'changed' | 'liveness' | 'startup'

export interface ContainerToStart {
  name: string
  type: ContainerType
  /** The restart count the new instance gets (the previous instance's + 1). */
  restartCount: number
  /** The instance it replaces (the newest, whatever its state), when there is one. */
  previous?: ObservedContainer
  /**
   * The newest exited instance of the container, which the crash back-off is measured from (the
   * kubelet's doBackOff takes the first exited status of that name in the pod status observed before
   * the pass acted). After a liveness or startup probe kill in the same pass that is the instance of
   * the cycle before, not the one just killed: the first kills restart at once.
   */
  backOffFrom?: ObservedContainer
}

export interface ContainerToKill {
  id: string
  name: string
  type: ContainerType
  reason: KillReason
  /** The kubelet's message, e.g. "Container app failed liveness probe, will be restarted". */
  message: string
  /** The failed probe's terminationGracePeriodSeconds, which wins over the pod's (the kubelet's setTerminationGracePeriod). */
  gracePeriodSeconds?: number
}

export interface PodActions {
  /** Stop the pod's sandboxes (and whatever runs in them). */
  killPod: boolean
  /** Then create a new sandbox with `attempt`. */
  createSandbox: boolean
  attempt: number
  /** The sandbox the containers are started in, when it is kept. */
  sandboxId?: string
  /** Why the sandbox is killed, for the event (SandboxChanged, DeadlineExceeded, Completed). */
  killReason?: 'SandboxChanged' | 'DeadlineExceeded' | 'Completed' | 'InitFailed'
  /** Init containers (sidecars, then at most one regular one) to start now, in order. */
  initContainersToStart: ContainerToStart[]
  containersToStart: ContainerToStart[]
  containersToKill: ContainerToKill[]
  /** A regular init container still runs: the app containers wait for it. */
  waitingForInit?: string
}

export interface ComputeOptions {
  /** Container IDs whose liveness or startup probe has failed (from the prober). */
  probeFailures?: ReadonlyMap<string, 'liveness' | 'startup'>
  /** Epoch ms. */
  now: number
}

/** An init container with restartPolicy Always: a sidecar (KEP-753). */
export function isSidecar(container: ContainerModel): boolean {
  return container.restartPolicy === 'Always'
}

/** The pod's activeDeadlineSeconds, when the model has one. */
export function activeDeadlineSeconds(pod: PodModel): number | undefined {
  const value = (pod as {activeDeadlineSeconds?: number}).activeDeadlineSeconds
  return typeof value === 'number' && value > 0 ? value : undefined
}

/** The newest instance of a container by name and type, in the given sandbox when one is named. */
function latest(observed: ObservedPod, name: string, type: ContainerType, sandboxId?: string): ObservedContainer | undefined {
  return observed.containers.find(
    (container) => container.name === name && container.type === type && (sandboxId === undefined || container.podSandboxId === sandboxId),
  )
}

function toStart(observed: ObservedPod, container: ContainerModel, type: ContainerType): ContainerToStart {
  const previous = latest(observed, container.name, type)
  // By name only, as doBackOff: init and app containers never share one.
  const backOffFrom = observed.containers.find((instance) => instance.name === container.name && instance.state === 'Exited')
  return {
    name: container.name,
    type,
    restartCount: previous ? previous.attempt + 1 : (container.attempt ?? 0),
    ...(previous ? {previous} : {}),
    ...(backOffFrom ? {backOffFrom} : {}),
  }
}

/** Whether the policy starts a container again once it exited with `exitCode` (Always: whatever it was; OnFailure: a failure). */
export function policyRestarts(policy: RestartPolicy, exitCode: number | null): boolean {
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)
}

/** The kubelet's ShouldContainerBeRestarted, for a container that is not running. */
export function shouldRestart(pod: PodModel, status: ObservedContainer | undefined): boolean {
  if (!status) return true
  if (status.state === 'Running') return false
  if (status.state === 'Unknown' || status.state === 'Created') return true
  return policyRestarts(pod.restartPolicy, status.exitCode)
}

/** runtimeutil.PodSandboxChanged: no sandbox, several ready, the newest not ready, or no IP → a new one with attempt + 1. */
export function podSandboxChanged(pod: PodModel, observed: ObservedPod): {changed: boolean; attempt: number; sandboxId?: string} {
  const [newest] = observed.sandboxes
  if (!newest) return {changed: true, attempt: pod.attempt ?? 0}
  const ready = observed.sandboxes.filter((sandbox) => sandbox.ready).length
  if (ready > 1 || !newest.ready || (!pod.hostNetwork && !newest.hasIp)) return {changed: true, attempt: newest.attempt + 1}
  return {changed: false, attempt: newest.attempt, sandboxId: newest.id}
}

function emptyActions(attempt: number, sandboxId?: string): PodActions {
  return {killPod: false, createSandbox: false, attempt, sandboxId, initContainersToStart: [], containersToStart: [], containersToKill: []}
}

/** Why a running container must be killed (definition changed, liveness or startup failed), or undefined to keep it. */
function killReasonFor(container: ContainerModel, status: ObservedContainer, options: ComputeOptions): ContainerToKill | undefined {
  const base = {id: status.id, name: container.name, type: status.type}
  if (status.hash && status.hash !== containerHash(container)) {
    return {...base, reason: 'changed', message: `Container ${container.name} definition changed`}
  }

  const failed = options.probeFailures?.get(status.id)
  if (failed) {
    const grace = (failed === 'liveness' ? container.livenessProbe : container.startupProbe)?.terminationGracePeriodSeconds
    return {...base, reason: failed, message: `Container ${container.name} failed ${failed} probe`, gracePeriodSeconds: grace}
  }

  return undefined
}

export function computePodActions(pod: PodModel, observed: ObservedPod, options: ComputeOptions): PodActions {
  const sandbox = podSandboxChanged(pod, observed)
  const deadline = activeDeadlineSeconds(pod)
  const oldest = observed.sandboxes.at(-1)
  if (deadline !== undefined && oldest && options.now - oldest.createdAtMs > deadline * 1000) {
    // The kubelet's pastActiveDeadline: the pod is failed and killed, never restarted.
    const actions = emptyActions(sandbox.attempt, sandbox.sandboxId)
    const anyRunning = observed.containers.some((container) => container.state === 'Running') || observed.sandboxes.some((s) => s.ready)
    return {...actions, killPod: anyRunning, killReason: 'DeadlineExceeded'}
  }

  if (sandbox.changed) return sandboxActions(pod, observed, sandbox.attempt)

  const actions = emptyActions(sandbox.attempt, sandbox.sandboxId)
  const initialized = computeInitContainerActions(pod, observed, actions, options)
  if (actions.killPod || !initialized) return actions

  let keep = 0
  for (const container of pod.containers) {
    const status = latest(observed, container.name, 'app', sandbox.sandboxId)
    if (!status || status.state !== 'Running') {
      if (shouldRestart(pod, status)) actions.containersToStart.push(toStart(observed, container, 'app'))
      continue
    }

    const kill = killReasonFor(container, status, options)
    if (!kill) {
      keep++
      continue
    }

    // A changed definition is always restarted; a failed probe only when the policy restarts failures.
    if (kill.reason === 'changed' || pod.restartPolicy !== 'Never') {
      kill.message += ', will be restarted'
      actions.containersToStart.push(toStart(observed, container, 'app'))
    }

    actions.containersToKill.push(kill)
  }

  actions.containersToKill.push(...unwantedContainers(pod, observed, sandbox.sandboxId))

  // Sidecars do not keep a pod alive: once the app containers are done, they are stopped with the sandbox.
  if (keep === 0 && actions.containersToStart.length === 0 && pod.containers.length > 0) {
    // Every container has terminated for good: the pod is done, its sandbox is stopped.
    return {...emptyActions(sandbox.attempt, sandbox.sandboxId), killPod: true, killReason: 'Completed', containersToKill: []}
  }

  return actions
}

/** Running containers podctl no longer wants (removed from the manifest) are killed too. */
function unwantedContainers(pod: PodModel, observed: ObservedPod, sandboxId: string | undefined): ContainerToKill[] {
  const wanted = new Set(pod.containers.map((container) => `app/${container.name}`))
  for (const container of pod.initContainers) wanted.add(`init/${container.name}`)
  return observed.containers
    .filter((status) => status.podSandboxId === sandboxId && status.state === 'Running' && !wanted.has(`${status.type}/${status.name}`))
    .map((status) => ({
      id: status.id,
      name: status.name,
      type: status.type,
      reason: 'changed' as const,
      message: `Container ${status.name} removed from the pod`,
    }))
}

/** The sandbox must be (re)created: which containers go into the new one, or nothing when the pod is done. */
function sandboxActions(pod: PodModel, observed: ObservedPod, attempt: number): PodActions {
  const actions: PodActions = {
    ...emptyActions(attempt),
    killPod: observed.sandboxes.length > 0,
    createSandbox: true,
    killReason: 'SandboxChanged',
  }
  const hasStatuses = observed.containers.length > 0
  if (pod.restartPolicy === 'Never' && observed.sandboxes.length > 0 && hasStatuses) {
    return {...actions, createSandbox: false, killPod: observed.sandboxes.some((sandbox) => sandbox.ready)}
  }

  const starts = pod.containers.filter((container) => {
    const status = latest(observed, container.name, 'app')
    return !(pod.restartPolicy === 'OnFailure' && status?.state === 'Exited' && status.exitCode === 0)
  })
  if (starts.length === 0 && hasStatuses) return {...actions, createSandbox: false, killPod: observed.sandboxes.some((s) => s.ready)}
  actions.containersToStart = starts.map((container) => toStart(observed, container, 'app'))
  // The init containers run again, in order, in the new sandbox (the executor waits for each).
  actions.initContainersToStart = pod.initContainers.map((container) => toStart(observed, container, 'init'))
  return actions
}

/**
 * computeInitContainerActions, sidecars included: regular init containers run one at a time to
 * success; a sidecar is started in order and kept running (restarted like an app container under
 * Always). Returns whether the pod is initialized (the app containers may be handled).
 */
function computeInitContainerActions(pod: PodModel, observed: ObservedPod, actions: PodActions, options: ComputeOptions): boolean {
  const sandboxId = actions.sandboxId
  const appStarted = observed.containers.some((container) => container.type === 'app' && container.podSandboxId === sandboxId)
  for (const container of pod.initContainers) {
    const status = latest(observed, container.name, 'init', sandboxId)
    if (isSidecar(container)) {
      if (status?.state === 'Running') {
        const kill = killReasonFor(container, status, options)
        if (!kill) continue
        kill.message += ', will be restarted'
        actions.containersToKill.push(kill)
      }

      actions.initContainersToStart.push(toStart(observed, container, 'init'))
      // Before the app containers run, the next init container waits for this sidecar to start.
      if (!appStarted) return false
      continue
    }

    if (appStarted) continue
    if (!status) {
      actions.initContainersToStart.push(toStart(observed, container, 'init'))
      return false
    }

    if (status.state === 'Running' || status.state === 'Created') {
      actions.waitingForInit = container.name
      return false
    }

    if (status.exitCode === 0) continue
    if (pod.restartPolicy === 'Never') {
      actions.killPod = true
      actions.killReason = 'InitFailed'
      return false
    }

    actions.initContainersToStart.push(toStart(observed, container, 'init'))
    return false
  }

  return true
}
