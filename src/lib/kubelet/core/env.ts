/**
 * The kubelet's makeEnvironmentVariables (kubelet_pods.go) and the downward API values
 * (podFieldSelectorRuntimeValue, fieldpath.ExtractFieldPathAsString, resource.ExtractContainerResourceValue
 * with limits defaulted to the node's allocatable): envFrom first (prefix, invalid keys skipped
 * with an InvalidEnvironmentVariableNames event), then env in order, each value $(VAR)-expanded
 * against what came before. Built after RunPodSandbox, when status.podIP is known. Every value
 * taken from a Secret (or expanded from one) is marked, so plans and messages can hide it.
 */
import {availableParallelism, hostname, networkInterfaces} from 'node:os'
import {readFileSync} from 'node:fs'
import {statfs} from 'node:fs/promises'

import {expandReferences} from '../../kube/expansion.js'
import {goQuote} from '../../util/go-quote.js'
import type {ContainerModel, InputObjects, PodModel, ResourceFieldRefModel} from '../../manifest/model.js'
import {envVarName} from '../../manifest/names.js'
import {EnvFileError, readFileKey} from './env-file.js'
import {hugePagesBytes, type NodeAllocatable, nodeAllocatable} from './node-allocatable.js'

export type {NodeAllocatable} from './node-allocatable.js'
import {parseQuantity, quantityMilliValue, quantityValue} from '../../manifest/quantity.js'

export interface EnvVar {
  name: string
  value: string
  /** From a Secret, or expanded from such a value: never shown. */
  secret?: boolean
}

/** What the downward API reads beyond the pod: its IPs (after the sandbox exists) and the node. */
export interface DownwardContext {
  podIPs: readonly string[]
  hostIPs: readonly string[]
  nodeName: string
  allocatable: NodeAllocatable
  /**
   * The pod's volumes on the host, once they exist: env fileKeyRef reads its file there. Without
   * them (--dry-run, the checks before the run) a fileKeyRef variable shows where it will be read from.
   */
  volumePaths?: ReadonlyMap<string, string>
}

/** A missing ConfigMap, Secret or key the container needs: the kubelet's CreateContainerConfigError message. */
export class EnvReferenceError extends Error {}

export type NodeDownward = Omit<DownwardContext, 'podIPs'>

/** A node context good enough to make a pod's lookups of ConfigMaps and Secrets (no value is kept). */
export const PLACEHOLDER_NODE: NodeDownward = {
  nodeName: '',
  hostIPs: [],
  allocatable: {cpuMilli: 1000n, memoryBytes: 1n, ephemeralStorageBytes: 1n},
}

/**
 * The pod's ConfigMaps and Secrets, when they can be looked up (a parsed input, or the objects a
 * recorded pod kept); undefined when the pod has none or, read back from pod.json, names them only.
 */
export function liveObjects(pod: PodModel): InputObjects | undefined {
  return typeof pod.objects?.configMap === 'function' && typeof pod.objects.secret === 'function' ? pod.objects : undefined
}

/**
 * The node as the downward API sees it: its name (hostname), its IPs (the default route's
 * interface first), its allocatable as the kubelet's (node-allocatable.ts): all CPUs, memory less
 * 100 MiB and the huge pages, the pod directories' filesystem less 10%.
 */
export async function nodeDownwardContext(nodeMemoryBytes: number, podDirRoot = '/'): Promise<NodeDownward> {
  const fs = await statfs(podDirRoot).catch(() => statfs('/').catch(() => undefined))
  return {
    nodeName: hostname().toLowerCase(),
    hostIPs: nodeIPs(),
    allocatable: nodeAllocatable({
      cpuMilli: BigInt(availableParallelism()) * 1000n,
      memoryBytes: BigInt(nodeMemoryBytes),
      hugePagesBytes: hugePagesBytes(),
      ephemeralStorageBytes: fs ? BigInt(fs.blocks) * BigInt(fs.bsize) : 0n,
    }),
  }
}

function nodeIPs(): string[] {
  let defaultInterface: string | undefined
  try {
    const routes = readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)
    defaultInterface = routes.map((line) => line.split('\t')).find((fields) => fields[1] === '00000000')?.[0]
  } catch {
    defaultInterface = undefined
  }

  const interfaces = networkInterfaces()
  const names = Object.keys(interfaces).sort((a, b) => Number(b === defaultInterface) - Number(a === defaultInterface))
  const ips = names.flatMap((name) => (interfaces[name] ?? []).filter((address) => !address.internal).map((address) => address.address))
  return ips.length > 0 ? ips : ['127.0.0.1']
}

/** fieldpath.FormatMap: `key="value"` lines, sorted by key. */
export function formatMap(map: Record<string, string>): string {
  return Object.keys(map)
    .sort()
    .map((key) => `${key}=${goQuote(map[key])}`)
    .join('\n')
}

/** ExtractFieldPathAsString plus the kubelet's own fields (spec.nodeName, status.*). */
export function fieldRefValue(pod: PodModel, fieldPath: string, context: DownwardContext): string {
  const subscript = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath)
  if (subscript) return (subscript[1] === 'labels' ? pod.labels : pod.annotations)[subscript[2]] ?? ''
  switch (fieldPath) {
    case 'metadata.name':
      return pod.name
    case 'metadata.namespace':
      return pod.namespace
    case 'metadata.uid':
      return pod.uid
    case 'metadata.labels':
      return formatMap(pod.labels)
    case 'metadata.annotations':
      return formatMap(pod.annotations)
    case 'spec.nodeName':
      return context.nodeName
    case 'spec.serviceAccountName':
      return pod.serviceAccountName ?? 'default'
    case 'status.hostIP':
      return context.hostIPs[0] ?? ''
    case 'status.hostIPs':
      return context.hostIPs.join(',')
    case 'status.podIP':
      return context.podIPs[0] ?? ''
    case 'status.podIPs':
      return context.podIPs.join(',')
    default:
      throw new EnvReferenceError(`unsupported fieldPath: ${fieldPath}`)
  }
}

/** ExtractContainerResourceValue on the container with limits defaulted to allocatable (defaultPodLimitsForDownwardAPI). */
export function resourceFieldRefValue(
  pod: PodModel,
  ref: ResourceFieldRefModel,
  self: ContainerModel,
  allocatable: NodeAllocatable,
): string {
  const container = ref.containerName
    ? [...pod.initContainers, ...pod.containers].find((candidate) => candidate.name === ref.containerName)
    : self
  if (!container) throw new EnvReferenceError(`container ${ref.containerName} not found`)
  const [kind, resource] = ref.resource.split('.') as ['limits' | 'requests', string]
  const divisorText = ref.divisor && parseQuantity(ref.divisor)?.numerator !== 0n ? ref.divisor : '1'
  const divisor = parseQuantity(divisorText)!
  const {limits, requests} = container.resources
  const ceilDiv = (a: bigint, b: bigint) => (b === 0n ? 0n : (a + b - 1n) / b)
  if (resource === 'cpu') {
    const text = kind === 'limits' ? limits.cpu : (requests.cpu ?? limits.cpu)
    const milli = text === undefined ? (kind === 'limits' ? allocatable.cpuMilli : 0n) : quantityMilliValue(parseQuantity(text)!)
    return String(ceilDiv(milli, quantityMilliValue(divisor)))
  }

  let bytes: bigint
  if (resource === 'memory') {
    const text = kind === 'limits' ? limits.memory : (requests.memory ?? limits.memory)
    bytes = text === undefined ? (kind === 'limits' ? allocatable.memoryBytes : 0n) : quantityValue(parseQuantity(text)!)
  } else if (resource === 'ephemeral-storage') {
    bytes = kind === 'limits' ? allocatable.ephemeralStorageBytes : 0n
  } else {
    // hugepages-<size>: podctl sets none.
    bytes = 0n
  }

  return String(ceilDiv(bytes, quantityValue(divisor)))
}

export interface BuiltEnvironment {
  env: EnvVar[]
  /** InvalidEnvironmentVariableNames warnings (keys of envFrom sources that are no env names). */
  warnings: string[]
}

/**
 * The pod's ConfigMaps and Secrets. A pod read back from pod.json whose objects were not kept (no
 * tmpfs on the node, or the node restarted) names them only: its env cannot be made again.
 */
function lookupObjects(pod: PodModel): InputObjects {
  if (pod.objects === undefined) return {configMap: () => undefined, secret: () => undefined}
  const live = liveObjects(pod)
  if (live) return live
  const gone = (kind: string, name: string): never => {
    throw new EnvReferenceError(
      `${kind} "${name}" of pod ${pod.name} was given to the run that made it, and podctl no longer has it ` +
        `(it keeps them in memory only); apply the pod again with them: podctl sync -f FILE`,
    )
  }

  return {configMap: (_namespace, name) => gone('configmap', name), secret: (_namespace, name) => gone('secret', name)}
}

/**
 * makeEnvironmentVariables. A missing non-optional ConfigMap, Secret or key throws EnvReferenceError
 * with the kubelet's message (`configmap "x" not found`, `couldn't find key k in ConfigMap ns/x`).
 */
export function makeEnvironmentVariables(pod: PodModel, container: ContainerModel, context: DownwardContext): BuiltEnvironment {
  const objects = lookupObjects(pod)
  const values = new Map<string, EnvVar>()
  const warnings: string[] = []
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef!
    const isSecret = source.secretRef !== undefined
    const found = isSecret ? objects.secret(pod.namespace, ref.name) : objects.configMap(pod.namespace, ref.name)
    if (!found) {
      if (ref.optional) continue
      throw new EnvReferenceError(`${isSecret ? 'secret' : 'configmap'} "${ref.name}" not found`)
    }

    const data: Record<string, string | Buffer> = 'type' in found ? found.data : found.data
    const invalid: string[] = []
    for (const [key, value] of Object.entries(data)) {
      const name = `${source.prefix}${key}`
      if (envVarName(name)) {
        invalid.push(name)
        continue
      }

      values.set(name, {name, value: value.toString(), ...(isSecret ? {secret: true} : {})})
    }

    if (invalid.length > 0) {
      warnings.push(
        `Keys [${invalid.sort().join(', ')}] from the EnvFrom ${isSecret ? 'secret' : 'configMap'} ${pod.namespace}/${ref.name} ` +
          'were skipped since they are considered invalid environment variable names.',
      )
    }
  }

  for (const variable of container.env) {
    let value = variable.value
    let secret = false
    const from = variable.valueFrom
    if (value !== '') {
      value = expandReferences(value, (name) => {
        const found = values.get(name)
        if (found?.secret) secret = true
        return found?.value
      })
    } else if (from?.fieldRef) {
      value = fieldRefValue(pod, from.fieldRef.fieldPath, context)
    } else if (from?.resourceFieldRef) {
      value = resourceFieldRefValue(pod, from.resourceFieldRef, container, context.allocatable)
    } else if (from?.configMapKeyRef) {
      const {name, key, optional} = from.configMapKeyRef
      const configMap = objects.configMap(pod.namespace, name)
      if (!configMap) {
        if (optional) continue
        throw new EnvReferenceError(`configmap "${name}" not found`)
      }

      if (!Object.hasOwn(configMap.data, key)) {
        if (optional) continue
        throw new EnvReferenceError(`couldn't find key ${key} in ConfigMap ${pod.namespace}/${name}`)
      }

      value = configMap.data[key]
    } else if (from?.fileKeyRef) {
      const {volumeName, path, key} = from.fileKeyRef
      const volumeDir = context.volumePaths?.get(volumeName)
      // Before the pod's volumes exist (--dry-run, the checks before a run) the file is not written yet.
      if (volumeDir === undefined) {
        values.set(variable.name, {name: variable.name, value: `<key ${key} of ${path} in volume ${volumeName}, read at start>`})
        continue
      }

      let found: string | undefined
      try {
        found = readFileKey(from.fileKeyRef, volumeDir)
      } catch (error) {
        if (error instanceof EnvFileError) throw new EnvReferenceError(error.message)
        throw error
      }

      if (found === undefined) continue
      value = found
    } else if (from?.secretKeyRef) {
      const {name, key, optional} = from.secretKeyRef
      const found = objects.secret(pod.namespace, name)
      if (!found) {
        if (optional) continue
        throw new EnvReferenceError(`secret "${name}" not found`)
      }

      if (!Object.hasOwn(found.data, key)) {
        if (optional) continue
        throw new EnvReferenceError(`couldn't find key ${key} in Secret ${pod.namespace}/${name}`)
      }

      value = found.data[key].toString('utf8')
      secret = true
    }

    values.set(variable.name, {name: variable.name, value, ...(secret ? {secret: true} : {})})
  }

  return {env: [...values.values()], warnings}
}
