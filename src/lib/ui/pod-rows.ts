/**
 * The rows `podctl ui` shows, from a snapshot (node-snapshot.ts): one per pod, one per container of
 * a pod, with the STATUS word kubectl's printer makes of the kubelet's statuses (Running,
 * CrashLoopBackOff, Completed, Init:0/1, Terminating …). Pure: no I/O, so the view's tests can feed
 * it any node.
 */
import type {ContainerStatusView} from '../kubelet/status/container-status.js'
import type {ListedPodStatus} from '../kubelet/status/listed-pods.js'
import type {NodeSnapshot, Usage} from './node-snapshot.js'

/** How a status reads at a glance: colour on a colour terminal, a mark without. */
export type Tone = 'ok' | 'busy' | 'bad' | 'done'

export interface PodRow {
  /** The pod's UID (or its sandbox ID): stays the same across refreshes and attempts. */
  key: string
  name: string
  namespace: string
  /** Ready containers / containers (app containers and sidecars), as kubectl's READY. */
  ready: string
  status: string
  tone: Tone
  restarts: number
  cpuCores: number | null
  memoryBytes: number | null
  /** Epoch ms of the pod's first sandbox. */
  createdAtMs: number
  ip: string
  pod: ListedPodStatus
}

export interface ContainerRow {
  name: string
  /** The current instance's ID ('' while none was created). */
  id: string
  type: 'init' | 'sidecar' | 'app'
  state: string
  tone: Tone
  ready: boolean
  restarts: number
  /** The previous attempt's end: `Error (exit 1) 2m ago`, or '-'. */
  lastState: string
  image: string
  cpuCores: number | null
  memoryBytes: number | null
  ports: string
  running: boolean
}

export const SORT_KEYS = ['name', 'namespace', 'status', 'restarts', 'cpu', 'memory', 'age'] as const
export type SortKey = (typeof SORT_KEYS)[number]

export function podRows(snapshot: NodeSnapshot): PodRow[] {
  return snapshot.pods.map((pod) => {
    const counted = pod.statuses.filter((c) => c.type === 'app' || c.sidecar)
    const ids = pod.instances.filter((c) => c.podSandboxId === pod.sandboxes[0]?.id && c.state === 'Running').map((c) => c.id)
    const use = sumUsage(ids.map((id) => snapshot.usage.get(id)))
    const status = displayStatus(pod)
    return {
      key: pod.uid || pod.sandboxes[0].id,
      name: pod.name,
      namespace: pod.namespace,
      ready: `${counted.filter((c) => c.ready).length}/${counted.length}`,
      status,
      tone: toneOf(status),
      restarts: pod.statuses.reduce((sum, c) => sum + c.restartCount, 0),
      ...use,
      createdAtMs: nanosToMs(pod.sandboxes.at(-1)!.createdAt),
      ip: pod.ip ?? '',
      pod,
    }
  })
}

/**
 * kubectl's STATUS column (printPod): the phase, replaced by the first init container that has not
 * completed (`Init:1/2`, `Init:CrashLoopBackOff`), else by the reason an app container waits or
 * ended with (CrashLoopBackOff, ContainerCreating, Completed, Error); `Terminating` once a kill is recorded.
 */
export function displayStatus(pod: ListedPodStatus): string {
  if (pod.terminating) return 'Terminating'
  const inits = pod.statuses.filter((c) => c.type === 'init')
  const init = initStatus(inits)
  if (init !== undefined) return init
  let reason: string = pod.phase
  let running = false
  for (const c of pod.statuses.filter((s) => s.type === 'app').reverse()) {
    if (c.waiting?.reason) reason = c.waiting.reason
    else if (c.terminated) reason = c.terminated.reason || `ExitCode:${c.terminated.exitCode}`
    else if (c.state === 'Running' && c.ready) running = true
  }

  // A pod whose first container completed while another still runs is Running (or NotReady), as kubectl says.
  if (reason === 'Completed' && running) return pod.ready ? 'Running' : 'NotReady'
  return reason
}

function initStatus(inits: readonly ContainerStatusView[]): string | undefined {
  for (const [index, c] of inits.entries()) {
    if (c.terminated?.exitCode === 0) continue
    if (c.sidecar && c.state === 'Running') continue
    if (c.terminated) return `Init:${c.terminated.reason || `ExitCode:${c.terminated.exitCode}`}`
    if (c.waiting?.reason && c.waiting.reason !== 'PodInitializing') return `Init:${c.waiting.reason}`
    return `Init:${index}/${inits.length}`
  }

  return undefined
}

export function toneOf(status: string): Tone {
  if (status === 'Running') return 'ok'
  if (status === 'Completed' || status === 'Succeeded') return 'done'
  if (/^(Pending|ContainerCreating|PodInitializing|Terminating|NotReady|Init:\d+\/\d+)$/.test(status)) return 'busy'
  return 'bad'
}

/** One row per container of the spec, init containers first, with its current instance's use. */
export function containerRows(pod: ListedPodStatus, snapshot: Pick<NodeSnapshot, 'ports' | 'usage'>): ContainerRow[] {
  return pod.statuses.map((c) => {
    const current =
      pod.instances.find((i) => i.name === c.name && i.type === c.type && i.podSandboxId === pod.sandboxes[0]?.id) ??
      pod.instances.find((i) => i.name === c.name && i.type === c.type)
    const use = current && c.state === 'Running' ? snapshot.usage.get(current.id) : undefined
    const state = containerState(c)
    return {
      name: c.name,
      id: current?.id ?? '',
      type: c.sidecar ? 'sidecar' : c.type,
      state,
      tone: c.state === 'Running' ? (c.ready ? 'ok' : 'busy') : c.terminated?.exitCode === 0 ? 'done' : toneOf(state),
      ready: c.ready,
      restarts: c.restartCount,
      lastState: c.lastState ? `${c.lastState.reason} (exit ${c.lastState.exitCode})` : '-',
      image: current?.image ?? '',
      cpuCores: use?.cpuCores ?? null,
      memoryBytes: use?.memoryBytes ?? null,
      ports: (current && snapshot.ports.get(current.id)) ?? '',
      running: c.state === 'Running',
    }
  })
}

/** `Running`, `CrashLoopBackOff`, `Completed (exit 0)`, `Error (exit 1)`, `ContainerCreating`. */
function containerState(c: ContainerStatusView): string {
  if (c.waiting) return c.waiting.reason
  if (c.terminated) return `${c.terminated.reason} (exit ${c.terminated.exitCode})`
  return c.state
}

function sumUsage(samples: ReadonlyArray<Usage | undefined>): Usage {
  let cpu: number | null = null
  let memory: number | null = null
  for (const sample of samples) {
    if (sample?.cpuCores !== null && sample?.cpuCores !== undefined) cpu = (cpu ?? 0) + sample.cpuCores
    if (sample?.memoryBytes !== null && sample?.memoryBytes !== undefined) memory = (memory ?? 0) + sample.memoryBytes
  }

  return {cpuCores: cpu, memoryBytes: memory}
}

function nanosToMs(nanos: string): number {
  return nanos ? Number(BigInt(nanos) / 1_000_000n) : 0
}

/** Case-insensitive substring of the pod's name (or name_namespace), as `/` types it. */
export function filterRows(rows: readonly PodRow[], text: string): PodRow[] {
  const needle = text.trim().toLowerCase()
  if (needle === '') return [...rows]
  return rows.filter((row) => row.pod.fullName.toLowerCase().includes(needle))
}

export function sortRows(rows: readonly PodRow[], key: SortKey, descending: boolean): PodRow[] {
  const byName = (a: PodRow, b: PodRow) => compareText(a.namespace, b.namespace) || compareText(a.name, b.name)
  const compare: Record<SortKey, (a: PodRow, b: PodRow) => number> = {
    name: (a, b) => compareText(a.name, b.name) || compareText(a.namespace, b.namespace),
    namespace: byName,
    status: (a, b) => compareText(a.status, b.status),
    restarts: (a, b) => a.restarts - b.restarts,
    cpu: (a, b) => (a.cpuCores ?? -1) - (b.cpuCores ?? -1),
    memory: (a, b) => (a.memoryBytes ?? -1) - (b.memoryBytes ?? -1),
    // Age ascending is the youngest first, as the newest pod is the one just started.
    age: (a, b) => b.createdAtMs - a.createdAtMs,
  }
  const sign = descending ? -1 : 1
  return [...rows].sort((a, b) => sign * compare[key](a, b) || byName(a, b))
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** CPU as kubectl top shows it: millicores (`12m`), `-` without two samples. */
export function formatCpu(cores: number | null): string {
  return cores === null ? '-' : `${Math.round(cores * 1000)}m`
}

/** Memory as kubectl top shows it: `512Ki`, `12Mi`, `1.5Gi`; `-` without a sample. */
export function formatMemory(bytes: number | null): string {
  if (bytes === null) return '-'
  const units = ['', 'Ki', 'Mi', 'Gi', 'Ti']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }

  return `${value < 10 && unit > 0 ? value.toFixed(1).replace(/\.0$/, '') : Math.round(value)}${units[unit]}`
}

/** kubectl's AGE: `45s`, `12m`, `3h`, `5d`. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000))
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 120) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return `${hours}h`
  return `${Math.floor(hours / 24)}d`
}
