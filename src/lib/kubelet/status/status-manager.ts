/**
 * The kubelet's status manager for podctl: per container ready, started, restart count, last
 * termination state and the termination message (read from the terminationMessagePath host file,
 * or the log tail with FallbackToLogsOnError, as kuberuntime's getTerminationMessage does), the pod
 * conditions (PodScheduled, Initialized, ContainersReady, Ready), and — when no supervisor runs — a
 * plain note that nothing will restart a container the policy would restart. The supervisor writes
 * readiness (from the prober) to status.json; `status` reads it while the supervisor lives.
 */
import {open} from 'node:fs/promises'

import type {CriClient} from '../../cri/client.js'
import {NotFoundError} from '../../errors.js'
import type {ContainerStatus} from '../../../generated/runtime/v1/api.js'
import {CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS, ladderFromEnv} from '../../kube/backoff.js'
import {stableKey} from '../../kube/helpers.js'
import {assembleLines, parseLogText} from '../../logs/cri-log.js'
import type {ContainerModel, PodModel} from '../../manifest/model.js'
import {
  type ConditionType,
  containerStatusOf,
  type ContainerStatusView,
  podConditionsOf,
  type StatusInput,
  type StatusSpec,
  type Termination,
  type Waiting,
} from './container-status.js'
import {
  readBackOff,
  readDesiredPod,
  readRecordedStatus,
  type RecordedContainerStatus,
  writeRecordedStatus,
} from '../config/desired-state.js'
import {isSidecar, policyRestarts} from '../kuberuntime/pod-actions.js'
import {getPodStatus, type PodStatusReport} from './pod-status.js'
import {podSandboxes} from '../kuberuntime/sandbox.js'
import {supervisorOf} from '../config/supervisor-lock.js'

/** The kubelet's limits: a message file is read up to 4 KiB; the log fallback is the last 80 lines, at most 2 KiB. */
const MAX_MESSAGE_BYTES = 4096
const FALLBACK_LOG_LINES = 80
const FALLBACK_LOG_BYTES = 2048

export type ProbeKindName = 'liveness' | 'readiness' | 'startup'
export type ProbeResultName = 'success' | 'failure' | 'unknown'

/** What the status manager needs from the prober (prober/manager.ts ProbeManager). */
export interface StatusProber {
  result(containerId: string, kind: ProbeKindName): ProbeResultName
  onResult(listener: (containerId: string, kind: ProbeKindName, result: ProbeResultName) => void): () => void
}

export interface ContainerProbes {
  addContainer(target: {
    pod: PodModel
    podSandboxId: string
    podIP?: string
    containerName: string
    containerId: string
    startedAtMs: number
  }): void
  removeContainer(containerId: string): void
}

export interface ContainerCondition {
  name: string
  type: 'init' | 'app'
  ready: boolean
  started: boolean
  restartCount: number
  /** Running, Exited, Created, or Waiting (never created, or waiting out its crash back-off). */
  state: ContainerStatusView['state']
  /** The kubelet's state.waiting: CrashLoopBackOff with its message and when the back-off ends. */
  waiting: Waiting | null
  /** The kubelet's state.terminated of the current instance (a finished init container: Completed, exit 0). */
  terminated: Termination | null
  /** The kubelet's lastState.terminated: the newest exited instance before the current one. */
  lastState: Termination | null
  /** The termination message of the newest instance, when it has exited. */
  message: string
}

export interface PodConditionsOptions {
  /** IDs of running containers an in-process prober has just seen ready (`status --wait-for ready`). */
  probedReady?: ReadonlySet<string>
  /** Epoch ms (tests). */
  now?: number
}

export interface PodConditions {
  conditions: Array<{type: ConditionType; status: boolean}>
  containerStatuses: ContainerCondition[]
  supervised: boolean
  /** Who supervises the pod (from its supervisor.lock), while a live process holds it. */
  supervisor: {pid: number; since: string; holder: string} | null
  /** "not supervised: c exited 1 at …; run podctl sync", when nothing will restart it. */
  notice?: string
}

async function readHead(path: string, bytes: number): Promise<string> {
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.alloc(bytes)
    const {bytesRead} = await handle.read(buffer, 0, bytes, 0)
    return buffer.subarray(0, bytesRead).toString('utf8')
  } finally {
    await handle.close()
  }
}

/** The kubelet's getTerminationMessage + readLastStringFromContainerLogs. */
export async function terminationMessage(status: ContainerStatus, policy: string | undefined): Promise<string> {
  const path = status.annotations['io.kubernetes.container.terminationMessagePath']
  const mount = status.mounts.find((candidate) => candidate.containerPath === path)
  let message = ''
  if (mount?.hostPath) message = await readHead(mount.hostPath, MAX_MESSAGE_BYTES).catch(() => '')
  const fallback = (policy ?? status.annotations['io.kubernetes.container.terminationMessagePolicy']) === 'FallbackToLogsOnError'
  if (message === '' && fallback && status.exitCode !== 0 && status.logPath) {
    const text = await readHead(status.logPath, 8 * 1024 * 1024).catch(() => '')
    const lines = assembleLines(parseLogText(text).entries).slice(-FALLBACK_LOG_LINES)
    const tail = lines.map((line) => `${line.text}\n`).join('')
    message = Buffer.byteLength(tail) > FALLBACK_LOG_BYTES ? Buffer.from(tail).subarray(-FALLBACK_LOG_BYTES).toString('utf8') : tail
  }

  return message
}

function supervisorAlive(pid: number | undefined): boolean {
  if (!pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function statusOf(client: CriClient, id: string): Promise<ContainerStatus | undefined> {
  try {
    return (await client.runtime('containerStatus', {containerId: id, verbose: false})).status
  } catch (error) {
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}

/** The containers the status shows: the recorded pod's (with probes and back-off keys), else the names the runtime holds. */
function statusSpecs(pod: PodModel | undefined, report: PodStatusReport): StatusSpec[] {
  if (!pod) return [...new Map(report.containers.map((c) => [`${c.type}/${c.name}`, {name: c.name, type: c.type}])).values()]
  const identity = {name: pod.name, namespace: pod.namespace, uid: report.uid}
  const spec = (container: ContainerModel, type: 'init' | 'app'): StatusSpec => ({
    name: container.name,
    type,
    sidecar: type === 'init' && isSidecar(container),
    hasReadinessProbe: Boolean(container.readinessProbe),
    hasStartupProbe: Boolean(container.startupProbe),
    backOffKey: stableKey(identity, container),
  })
  return [...pod.initContainers.map((c) => spec(c, 'init')), ...pod.containers.map((c) => spec(c, 'app'))]
}

/** What containerStatusOf needs besides the specs: the instances, the sandbox, and the pod's back-off (backoff.json). */
async function statusInput(report: PodStatusReport, specs: StatusSpec[], podDirRoot: string, now: number): Promise<StatusInput> {
  const sandbox = report.sandboxes[0]
  return {
    pod: {name: report.name, namespace: report.namespace, uid: report.uid},
    restartPolicy: report.restartPolicy,
    specs,
    instances: report.containers,
    newestSandbox: sandbox && {id: sandbox.id, ready: sandbox.state === 'Ready'},
    backOff: {
      entries: await readBackOff(podDirRoot, report.uid).catch(() => ({})),
      ladder: ladderFromEnv(CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS),
    },
    now,
  }
}

/**
 * The pod's conditions and per-container status, from the runtime, the recorded pod, its back-off and
 * (while supervised) the recorded readiness.
 */
export async function podConditions(
  client: CriClient,
  report: PodStatusReport,
  podDirRoot: string,
  options: PodConditionsOptions = {},
): Promise<PodConditions> {
  const [pod, recorded, holder] = await Promise.all([
    readDesiredPod(podDirRoot, report.uid),
    readRecordedStatus(podDirRoot, report.uid),
    supervisorOf(podDirRoot, report.uid).catch(() => undefined),
  ])
  const supervisor = holder ? {pid: holder.pid, since: holder.since, holder: holder.holder} : null
  const supervised = supervisor !== null || supervisorAlive(recorded?.supervisor?.pid)
  const specs = statusSpecs(pod, report)
  const input = await statusInput(report, specs, podDirRoot, options.now ?? Date.now())
  input.recorded = supervised ? recorded?.containers : undefined
  input.probedReady = options.probedReady
  const policies = new Map([...(pod?.initContainers ?? []), ...(pod?.containers ?? [])].map((c) => [c.name, c.terminationMessagePolicy]))
  const messages = new Map<string, Promise<string>>()
  const messageOf = (termination: Termination | null, policy?: string): Promise<string> => {
    if (!termination) return Promise.resolve('')
    const id = termination.containerId
    if (!messages.has(id))
      messages.set(
        id,
        statusOf(client, id).then((status) => (status ? terminationMessage(status, policy) : '')),
      )
    return messages.get(id)!
  }

  const views = specs.map((spec) => containerStatusOf(spec, input))
  const containerStatuses = await Promise.all(
    views.map(async (view): Promise<ContainerCondition> => {
      const policy = policies.get(view.name)
      const [terminated, lastState] = await Promise.all(
        [view.terminated, view.lastState].map(async (end) => end && {...end, message: await messageOf(end, policy)}),
      )
      // The newest instance's own message: its termination, or (waiting out a back-off) the termination it just had.
      const newestEnd = terminated ?? (view.waiting?.reason === 'CrashLoopBackOff' ? lastState : null)
      const {name, type, ready, started, restartCount, state, waiting} = view
      return {name, type, ready, started, restartCount, state, waiting, terminated, lastState, message: newestEnd?.message ?? ''}
    }),
  )
  const conditions = podConditionsOf(views, report.sandboxes[0]?.state === 'Ready')
  const notice = supervised ? undefined : unsupervisedNotice(report, pod, options.probedReady)
  return {conditions, containerStatuses, supervised, supervisor, notice}
}

/**
 * When nothing supervises the pod, what that leaves undone: a container exited that its policy would
 * restart, and probes nobody runs (a running container with a readiness or startup probe is not
 * ready, since only a prober can say it is: `run --wait ready` probed it, and stopped when it returned).
 */
function unsupervisedNotice(report: PodStatusReport, pod: PodModel | undefined, probedReady?: ReadonlySet<string>): string | undefined {
  if (!pod || report.sandboxes[0]?.state !== 'Ready') return undefined
  const lines = [exitedNotice(report, pod), unprobedNotice(report, pod, probedReady)].filter((line) => line !== undefined)
  return lines.length > 0 ? lines.join('\n') : undefined
}

function unprobedNotice(report: PodStatusReport, pod: PodModel, probedReady?: ReadonlySet<string>): string | undefined {
  const newest = report.sandboxes[0].id
  const specs = new Map([...pod.initContainers, ...pod.containers].map((container) => [container.name, container]))
  const unprobed = report.containers.filter((c) => {
    const spec = specs.get(c.name)
    return c.podSandboxId === newest && c.state === 'Running' && !probedReady?.has(c.id) && (spec?.readinessProbe || spec?.startupProbe)
  })
  if (unprobed.length === 0) return undefined
  const names = [...new Set(unprobed.map((c) => c.name))].join(', ')
  const ref = `${report.name} -n ${report.namespace}`
  return (
    `Ready=False — not supervised: nothing probes ${names} now, so ${unprobed.length === 1 ? 'it is' : 'they are'} not ready; ` +
    `podctl sync --watch ${ref} runs the probes (podctl status ${ref} --wait-for ready probes once)`
  )
}

/** A container exited that the pod's policy would restart, and nothing will. */
function exitedNotice(report: PodStatusReport, pod: PodModel): string | undefined {
  const newest = report.sandboxes[0].id
  const waiting = report.containers.filter((c, index, all) => {
    if (c.podSandboxId !== newest || c.state !== 'Exited' || c.type !== 'app') return false
    if (all.findIndex((other) => other.name === c.name && other.type === c.type) !== index) return false
    return policyRestarts(pod.restartPolicy, c.exitCode)
  })
  if (waiting.length === 0) return undefined
  const what = waiting.map((c) => `${c.name} exited ${c.exitCode ?? '?'} at ${c.finishedAt ?? 'an unknown time'}`).join(', ')
  return `${report.phase} — not supervised: ${what}; run podctl sync ${report.name} -n ${report.namespace}`
}

/**
 * The supervisor's turn for one pod after a sync: probe workers for its running containers (added
 * when a container starts, removed when it goes) and status.json with readiness and the supervisor's pid.
 */
export async function recordStatus(
  client: CriClient,
  pod: PodModel,
  settings: {podDirRoot: string},
  prober: (ContainerProbes & StatusProber) | undefined,
  registered: Set<string> = new Set(),
): Promise<void> {
  const sandboxes = await podSandboxes(client, pod)
  if (sandboxes.length === 0) return
  const report = await getPodStatus(client, sandboxes)
  const newest = report.sandboxes[0]
  const running = report.containers.filter((c) => c.state === 'Running' && c.podSandboxId === newest?.id)
  if (prober) {
    for (const container of running) {
      if (registered.has(container.id)) continue
      registered.add(container.id)
      const startedAtMs = container.startedAt ? Date.parse(container.startedAt) : Date.now()
      prober.addContainer({
        pod,
        podSandboxId: newest.id,
        podIP: report.ip ?? undefined,
        containerName: container.name,
        containerId: container.id,
        startedAtMs,
      })
    }

    const live = new Set(running.map((c) => c.id))
    for (const id of registered)
      if (!live.has(id)) {
        prober.removeContainer(id)
        registered.delete(id)
      }
  }

  const containers: Record<string, RecordedContainerStatus> = {}
  for (const container of running) {
    const spec = [...pod.initContainers, ...pod.containers].find((c) => c.name === container.name) as
      {readinessProbe?: unknown; startupProbe?: unknown} | undefined
    const startup = spec?.startupProbe ? prober?.result(container.id, 'startup') === 'success' : true
    const ready = startup && (prober ? prober.result(container.id, 'readiness') === 'success' : !spec?.readinessProbe)
    containers[container.name] = {ready, started: startup}
  }

  // A container waiting out its crash back-off: the record says so too (CrashLoopBackOff, and until when).
  const input = await statusInput(report, statusSpecs(pod, report), settings.podDirRoot, Date.now())
  for (const spec of input.specs) {
    const {waiting} = containerStatusOf(spec, input)
    if (waiting?.reason !== 'CrashLoopBackOff') continue
    const {reason, message, backOffUntil} = waiting
    containers[spec.name] = {ready: false, started: false, waiting: {reason, message, backOffUntil}}
  }

  await writeRecordedStatus(settings.podDirRoot, pod.uid, {
    supervisor: {pid: process.pid, since: supervisingSince()},
    updatedAt: new Date().toISOString(),
    containers,
  })
}

/** When this process first recorded a pod's status: the supervisor's `since`. */
let firstRecorded: string | undefined

function supervisingSince(): string {
  firstRecorded ??= new Date().toISOString()
  return firstRecorded
}

/** The supervisor stops: its pid leaves status.json (readiness is no longer known). */
export async function releaseStatus(podDirRoot: string, uid: string): Promise<void> {
  const recorded = await readRecordedStatus(podDirRoot, uid)
  if (!recorded || recorded.supervisor?.pid !== process.pid) return
  await writeRecordedStatus(podDirRoot, uid, {updatedAt: new Date().toISOString(), containers: {}}).catch(() => {})
}
