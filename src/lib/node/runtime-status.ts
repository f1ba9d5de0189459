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
  /** True when every condition the runtime reports is true. */
  ready: boolean
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
    ready: conditions.length > 0 && conditions.every((condition) => condition.status),
  }
}
