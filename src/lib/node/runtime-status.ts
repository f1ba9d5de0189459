import {CRI_CLIENT_VERSION, type CriClient} from '../cri/client.js'
import type {RuntimeCondition} from '../../generated/runtime/v1/api.js'

export interface RuntimeStatusReport {
  endpoint: string
  imageEndpoint: string
  runtime: {name: string; version: string; apiVersion: string; criVersion: string}
  conditions: Array<Pick<RuntimeCondition, 'type' | 'status' | 'reason' | 'message'>>
  pods: {ready: number; total: number}
  containers: {running: number; total: number}
  images: number
  /** From RuntimeConfig; null when the runtime predates that RPC (containerd 1.6 answers UNIMPLEMENTED). */
  cgroupDriver: string | null
  /** True when RuntimeReady and NetworkReady are both reported and true (the kubelet's test); other conditions only warn. */
  ready: boolean
}

/**
 * The conditions the kubelet requires of a runtime (its runtime-state check reads only these two; a
 * missing one counts as false). Any other condition, such as containerd 1.7's
 * ContainerdHasNoDeprecationWarnings, is advice and never makes the runtime unready.
 */
export const REQUIRED_RUNTIME_CONDITIONS = ['RuntimeReady', 'NetworkReady'] as const

type Condition = RuntimeStatusReport['conditions'][number]

/** The required conditions that are false, and those missing (reported as false with reason "not reported"). */
export function unmetRequiredConditions(conditions: readonly Condition[]): Condition[] {
  return REQUIRED_RUNTIME_CONDITIONS.flatMap((type) => {
    const condition = conditions.find((candidate) => candidate.type === type)
    if (condition === undefined) return [{type, status: false, reason: 'not reported', message: ''}]
    return condition.status ? [] : [condition]
  })
}

/** "NetworkReady (NetworkPluginNotReady: cni config uninitialized)" */
function describeCondition(c: Condition): string {
  return `${c.type}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`
}

/** Why the runtime is not ready, naming each unmet required condition; undefined when it is ready. */
export function notReadyMessage(report: RuntimeStatusReport): string | undefined {
  const unmet = unmetRequiredConditions(report.conditions)
  if (unmet.length === 0) return undefined
  return `runtime at ${report.endpoint} is not ready: ${unmet.map(describeCondition).join(', ')}`
}

/** The warning for a false condition that does not make the runtime unready. */
export function falseConditionWarning(condition: Condition): string {
  return `runtime condition ${describeCondition(condition)} is false`
}

/** The false conditions that are not required: shown as warnings. */
export function advisoryFalseConditions(conditions: readonly Condition[]): Condition[] {
  const required: readonly string[] = REQUIRED_RUNTIME_CONDITIONS
  return conditions.filter((condition) => !condition.status && !required.includes(condition.type))
}

/**
 * Version, Status, RuntimeConfig and the three list calls, all concurrently: one round-trip of
 * latency. The lists are only counted, never decoded (client.countRuntime): a busy node's pods,
 * containers and images are most of the bytes, and none of their details is shown.
 */
export async function runtimeStatus(client: CriClient): Promise<RuntimeStatusReport> {
  const [version, status, pods, containers, images, runtimeConfig] = await Promise.all([
    client.runtime('version', {version: CRI_CLIENT_VERSION}),
    client.runtime('status', {verbose: false}),
    client.countRuntime('listPodSandbox', {}),
    client.countRuntime('listContainers', {}),
    client.countImages({}),
    client.runtimeOptional('runtimeConfig', {}),
  ])
  const conditions = (status.status?.conditions ?? []).map(({type, status, reason, message}) => ({type, status, reason, message}))
  return {
    endpoint: client.runtimeEndpoint,
    imageEndpoint: client.imageEndpoint,
    runtime: {
      name: version.runtimeName,
      version: version.runtimeVersion,
      apiVersion: version.runtimeApiVersion,
      criVersion: version.version,
    },
    conditions,
    pods: {ready: pods.byState.get('SANDBOX_READY') ?? 0, total: pods.total},
    containers: {running: containers.byState.get('CONTAINER_RUNNING') ?? 0, total: containers.total},
    images,
    cgroupDriver: runtimeConfig?.linux?.cgroupDriver ?? null,
    ready: unmetRequiredConditions(conditions).length === 0,
  }
}
