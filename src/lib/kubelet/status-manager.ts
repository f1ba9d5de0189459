/**
 * The kubelet's status manager for podctl: per container ready, started, restart count, last
 * termination state and the termination message (read from the terminationMessagePath host file,
 * or the log tail with FallbackToLogsOnError, as kuberuntime's getTerminationMessage does), the pod
 * conditions (PodScheduled, Initialized, ContainersReady, Ready), and — when no supervisor runs — a
 * plain note that nothing will restart a container the policy would restart. The supervisor writes
 * readiness (from the prober) to status.json; `status` reads it while the supervisor lives.
 */
import {open} from 'node:fs/promises'

import type {CriClient} from '../cri/client.js'
import {NotFoundError} from '../errors.js'
import type {ContainerStatus} from '../../generated/runtime/v1/api.js'
import {assembleLines, parseLogText} from '../logs/cri-log.js'
import type {PodModel} from '../manifest/model.js'
import {readDesiredPod, readRecordedStatus, type RecordedContainerStatus, writeRecordedStatus} from './desired-state.js'
import {shouldRestart} from './pod-actions.js'
import {type ContainerReport, getPodStatus, type PodStatusReport} from './pod-status.js'
import {podSandboxes} from './sandbox.js'
import {supervisorOf} from './supervisor-lock.js'

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
  state: string
  lastState: RecordedContainerStatus['lastTermination'] | null
  /** The termination message of the current instance, when it has exited. */
  message: string
}

export interface PodConditions {
  conditions: Array<{type: 'PodScheduled' | 'Initialized' | 'ContainersReady' | 'Ready'; status: boolean}>
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

async function lastTermination(client: CriClient, instance: ContainerReport, policy?: string): Promise<ContainerCondition['lastState']> {
  const status = await statusOf(client, instance.id)
  return {
    exitCode: instance.exitCode ?? -1,
    reason: instance.reason || (instance.exitCode === 0 ? 'Completed' : 'Error'),
    message: status ? await terminationMessage(status, policy) : '',
    startedAt: instance.startedAt,
    finishedAt: instance.finishedAt,
  }
}

/** The pod's conditions and per-container status, from the runtime, the recorded pod and (while supervised) the recorded readiness. */
export async function podConditions(client: CriClient, report: PodStatusReport, podDirRoot: string): Promise<PodConditions> {
  const [pod, recorded, holder] = await Promise.all([
    readDesiredPod(podDirRoot, report.uid),
    readRecordedStatus(podDirRoot, report.uid),
    supervisorOf(podDirRoot, report.uid).catch(() => undefined),
  ])
  const supervisor = holder ? {pid: holder.pid, since: holder.since, holder: holder.holder} : null
  const supervised = supervisor !== null || supervisorAlive(recorded?.supervisor?.pid)
  const newestSandbox = report.sandboxes[0]?.id
  const names = pod
    ? [
        ...pod.initContainers.map((c) => ({name: c.name, type: 'init' as const})),
        ...pod.containers.map((c) => ({name: c.name, type: 'app' as const})),
      ]
    : [...new Map(report.containers.map((c) => [`${c.type}/${c.name}`, {name: c.name, type: c.type}])).values()]
  const containerStatuses: ContainerCondition[] = []
  for (const {name, type} of names) {
    const instances = report.containers.filter((c) => c.name === name && c.type === type)
    const current = instances.find((c) => c.podSandboxId === newestSandbox) ?? instances[0]
    const spec = [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])].find((c) => c.name === name)
    const hasReadiness = Boolean((spec as {readinessProbe?: unknown} | undefined)?.readinessProbe)
    const running = current?.state === 'Running'
    const record = supervised ? recorded?.containers[name] : undefined
    const previous = instances.find((c) => c !== current && c.state === 'Exited')
    const exitedNow = current?.state === 'Exited'
    containerStatuses.push({
      name,
      type,
      ready: running && (record ? record.ready : !hasReadiness),
      started: running && (record ? record.started : true),
      restartCount: current?.attempt ?? 0,
      state: current?.state ?? 'Waiting',
      lastState: previous ? await lastTermination(client, previous, spec?.terminationMessagePolicy) : null,
      message: exitedNow && current ? ((await lastTermination(client, current, spec?.terminationMessagePolicy))?.message ?? '') : '',
    })
  }

  const apps = containerStatuses.filter((c) => c.type === 'app')
  const initialized =
    containerStatuses.filter((c) => c.type === 'init').every((c) => c.state !== 'Waiting') && apps.some((c) => c.state !== 'Waiting')
  const containersReady = apps.length > 0 && apps.every((c) => c.ready)
  const conditions: PodConditions['conditions'] = [
    {type: 'PodScheduled', status: true},
    {type: 'Initialized', status: initialized},
    {type: 'ContainersReady', status: containersReady},
    {type: 'Ready', status: containersReady && report.sandboxes[0]?.state === 'Ready'},
  ]
  return {conditions, containerStatuses, supervised, supervisor, notice: supervised ? undefined : unsupervisedNotice(report, pod)}
}

/** When nothing supervises the pod and a container exited that its policy would restart, say so. */
function unsupervisedNotice(report: PodStatusReport, pod: PodModel | undefined): string | undefined {
  if (!pod || report.sandboxes[0]?.state !== 'Ready') return undefined
  const newest = report.sandboxes[0].id
  const waiting = report.containers.filter((c, index, all) => {
    if (c.podSandboxId !== newest || c.state !== 'Exited' || c.type !== 'app') return false
    if (all.findIndex((other) => other.name === c.name && other.type === c.type) !== index) return false
    return shouldRestart(pod, {state: 'Exited', exitCode: c.exitCode} as never)
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

  await writeRecordedStatus(settings.podDirRoot, pod.uid, {
    supervisor: {pid: process.pid, since: new Date().toISOString()},
    updatedAt: new Date().toISOString(),
    containers,
  })
}

/** The supervisor stops: its pid leaves status.json (readiness is no longer known). */
export async function releaseStatus(podDirRoot: string, uid: string): Promise<void> {
  const recorded = await readRecordedStatus(podDirRoot, uid)
  if (!recorded || recorded.supervisor?.pid !== process.pid) return
  await writeRecordedStatus(podDirRoot, uid, {updatedAt: new Date().toISOString(), containers: {}}).catch(() => {})
}
