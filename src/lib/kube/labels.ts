/**
 * The kubelet's labels.go: every io.kubernetes.* and io.podctl.* key podctl puts on sandboxes and
 * containers, the writers that build those maps and the readers that get the values back. The
 * kubelet keeps the pod spec in memory; podctl only has the runtime, so `run` records here what
 * `kill` and `status POD` read back here to behave like the kubelet later.
 */
import type {Container} from '../../generated/runtime/v1/api.js'
import {clampTimerSeconds} from '../util/duration.js'

export const PodLabel = {
  name: 'io.kubernetes.pod.name',
  namespace: 'io.kubernetes.pod.namespace',
  uid: 'io.kubernetes.pod.uid',
} as const

export const ContainerLabel = {
  name: 'io.kubernetes.container.name',
} as const

export const ContainerAnnotation = {
  hash: 'io.kubernetes.container.hash',
  restartCount: 'io.kubernetes.container.restartCount',
  terminationMessagePath: 'io.kubernetes.container.terminationMessagePath',
  terminationMessagePolicy: 'io.kubernetes.container.terminationMessagePolicy',
  preStopHandler: 'io.kubernetes.container.preStopHandler',
  postStartHandler: 'io.kubernetes.container.postStartHandler',
  ports: 'io.kubernetes.container.ports',
  podTerminationGracePeriod: 'io.kubernetes.pod.terminationGracePeriod',
} as const

export const PodctlAnnotation = {
  /** On the sandbox: Always | OnFailure | Never (absent → Always, the Kubernetes default). */
  restartPolicy: 'io.podctl.restartPolicy',
  /** On a container: init | app (absent → app). */
  containerType: 'io.podctl.containerType',
  /** On the sandbox: the host directory podctl made for the pod (emptyDir, /etc/hosts), removed with it. */
  podDirectory: 'io.podctl.podDirectory',
  /** On a container: JSON of its probes (as the pod model has them), so `status --wait-for ready` can run them. */
  probes: 'io.podctl.probes',
  /**
   * On a sidecar (an init container with restartPolicy Always): its index in spec.initContainers,
   * so `kill` can stop sidecars after the app containers, in reverse declaration order.
   */
  sidecar: 'io.podctl.sidecar',
  /** On a container: JSON list of the NAMES (never values) of env variables taken from a Secret, so `inspect` redacts them. */
  secretEnv: 'io.podctl.secretEnv',
  /** On the Pod of a static pod file `run --static` wrote ("true"), and so on its sandbox: `kill --static` removes only such files. */
  staticPod: 'io.podctl.staticPod',
} as const

/** What podctl prints instead of a Secret's value. */
export const REDACTED = '<redacted>'

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never'
export type ContainerType = 'init' | 'app'
export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never'
export const PULL_POLICIES: readonly PullPolicy[] = ['Always', 'IfNotPresent', 'Never']

/** Kubernetes' default terminationGracePeriodSeconds. */
export const DEFAULT_GRACE_PERIOD_SECONDS = 30

type StringMap = Readonly<Record<string, string>>

/** What the writers read from a pod: fields of the manifest's PodModel (kube sits below the manifest). */
export interface LabeledPod {
  name: string
  namespace: string
  uid: string
  labels: StringMap
  annotations: StringMap
  restartPolicy: RestartPolicy
  terminationGracePeriodSeconds?: number
}

/** What the writers read from a container: fields of the manifest's ContainerModel. */
export interface LabeledContainer {
  name: string
  terminationMessagePath: string
  terminationMessagePolicy: string
  lifecycle: {preStop?: unknown}
  livenessProbe?: unknown
  readinessProbe?: unknown
  startupProbe?: unknown
  /** Init containers only: Always makes it a sidecar. */
  restartPolicy?: 'Always'
  ports: ReadonlyArray<{name?: string; hostPort?: number; containerPort: number; protocol: string; hostIP?: string}>
  /** crictl container configs only: labels and annotations of their own (the kubelet's keys win). */
  extraLabels?: StringMap
  extraAnnotations?: StringMap
}

// ---------------------------------------------------------------------------------------------
// Writers

/** newPodLabels: the pod's labels plus the kubelet's three (which win). */
export function newPodLabels(pod: LabeledPod): Record<string, string> {
  return {...pod.labels, [PodLabel.name]: pod.name, [PodLabel.namespace]: pod.namespace, [PodLabel.uid]: pod.uid}
}

/** newPodAnnotations: the pod's annotations plus what `kill` and `status POD` need from podctl. */
export function newPodAnnotations(pod: LabeledPod, podDirectory: string): Record<string, string> {
  return {...pod.annotations, [PodctlAnnotation.restartPolicy]: pod.restartPolicy, [PodctlAnnotation.podDirectory]: podDirectory}
}

export function newContainerLabels(pod: LabeledPod, container: LabeledContainer): Record<string, string> {
  return {
    ...container.extraLabels,
    [PodLabel.name]: pod.name,
    [PodLabel.namespace]: pod.namespace,
    [PodLabel.uid]: pod.uid,
    [ContainerLabel.name]: container.name,
  }
}

export function newContainerAnnotations(
  pod: LabeledPod,
  container: LabeledContainer,
  type: ContainerType,
  restartCount: number,
  sidecarIndex?: number,
): Record<string, string> {
  const annotations: Record<string, string> = {
    ...container.extraAnnotations,
    [ContainerAnnotation.hash]: containerHash(container),
    [ContainerAnnotation.restartCount]: String(restartCount),
    [ContainerAnnotation.terminationMessagePath]: container.terminationMessagePath,
    [ContainerAnnotation.terminationMessagePolicy]: container.terminationMessagePolicy,
    [PodctlAnnotation.containerType]: type,
  }
  // The API server defaults the grace period to 30, so the kubelet always records one.
  annotations[ContainerAnnotation.podTerminationGracePeriod] = String(pod.terminationGracePeriodSeconds ?? DEFAULT_GRACE_PERIOD_SECONDS)

  if (container.lifecycle.preStop) annotations[ContainerAnnotation.preStopHandler] = JSON.stringify(container.lifecycle.preStop)
  if (container.ports.length > 0) annotations[ContainerAnnotation.ports] = portsAnnotation(container)
  if (type === 'init' && container.restartPolicy === 'Always') annotations[PodctlAnnotation.sidecar] = String(sidecarIndex ?? 0)
  const {livenessProbe, readinessProbe, startupProbe} = container
  if (livenessProbe || readinessProbe || startupProbe) {
    annotations[PodctlAnnotation.probes] = JSON.stringify({livenessProbe, readinessProbe, startupProbe})
  }

  return annotations
}

/** FNV-1a (32-bit) over the container spec: a stable hash, compared only with itself (annotation io.kubernetes.container.hash). */
export function containerHash(container: object): string {
  const text = JSON.stringify(container)
  let hash = 0x81_1c_9d_c5
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte
    hash = Math.imul(hash, 0x01_00_01_93) >>> 0
  }

  return hash.toString(16)
}

/** JSON of the ports as the kubelet writes v1.ContainerPort (Go field order, omitempty). */
function portsAnnotation(container: LabeledContainer): string {
  return JSON.stringify(
    container.ports.map((port) => ({
      ...(port.name === undefined ? {} : {name: port.name}),
      ...(port.hostPort === undefined ? {} : {hostPort: port.hostPort}),
      containerPort: port.containerPort,
      protocol: port.protocol,
      ...(port.hostIP === undefined ? {} : {hostIP: port.hostIP}),
    })),
  )
}

// ---------------------------------------------------------------------------------------------
// Readers

/**
 * A container's name: the kubelet's label first (getContainerInfoFromLabels), then the CRI
 * metadata, for containers made by other tools. podctl and the kubelet always write both the same.
 */
export function containerName(container: Pick<Container, 'labels' | 'metadata'>): string {
  return container.labels[ContainerLabel.name] || container.metadata?.name || ''
}

/** The io.kubernetes.pod.uid label (the kubelet's GetPodUID); '' when absent (e.g. made by crictl). */
export function podUidOf(labels: StringMap): string {
  return labels[PodLabel.uid] ?? ''
}

/** Absent or unknown → app, as for containers podctl did not make. */
export function containerTypeOf(annotations: StringMap): ContainerType {
  return annotations[PodctlAnnotation.containerType] === 'init' ? 'init' : 'app'
}

/** A sidecar's index in spec.initContainers, as `run` recorded it; undefined for every other container. */
export function sidecarIndexOf(annotations: StringMap): number | undefined {
  const value = annotations[PodctlAnnotation.sidecar]
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined
}

export function parseRestartPolicy(value: string | undefined): RestartPolicy {
  return value === 'Never' || value === 'OnFailure' ? value : 'Always'
}

/** The restart policy recorded on the first sandbox annotations that have one; else Always. */
export function restartPolicyOf(...annotationSets: StringMap[]): RestartPolicy {
  const recorded = annotationSets.map((annotations) => annotations[PodctlAnnotation.restartPolicy])
  return parseRestartPolicy(recorded.find((value) => value !== undefined))
}

/** The env names recorded in io.podctl.secretEnv ([] when absent or unreadable). */
export function secretEnvNamesOf(annotations: Readonly<Record<string, string | undefined>> | undefined): string[] {
  try {
    const names: unknown = JSON.parse(annotations?.[PodctlAnnotation.secretEnv] ?? '[]')
    return Array.isArray(names) ? names.filter((name): name is string => typeof name === 'string') : []
  } catch {
    return []
  }
}

/** The host directory `run` recorded on a sandbox, if any. */
export function podDirectoryOf(annotations: StringMap): string | undefined {
  return annotations[PodctlAnnotation.podDirectory]
}

/** The grace period the kubelet would use for this container (setTerminationGracePeriod, restored from annotations). */
export function gracePeriodFor(annotations: StringMap, override?: number): number {
  // Clamped: a grace period beyond what timers accept would fire at once (or crash) mid-kill.
  if (override !== undefined) return clampTimerSeconds(Math.max(0, Math.floor(override)))
  const value = annotations[ContainerAnnotation.podTerminationGracePeriod]
  if (value !== undefined && /^\d+$/.test(value.trim())) return clampTimerSeconds(Number(value.trim()))
  return DEFAULT_GRACE_PERIOD_SECONDS
}

export interface HookHttpGet {
  path: string
  port: number | string
  host?: string
  scheme: 'HTTP' | 'HTTPS'
  httpHeaders: Array<{name: string; value: string}>
}

export type PreStopHook =
  | {type: 'exec'; command: string[]}
  /** Handlers run from the node (as the manifest wrote them). */
  | {type: 'node'; handler: {httpGet: HookHttpGet} | {sleep: {seconds: number}} | {tcpSocket: {port: number | string; host?: string}}}
  | {type: 'unsupported'; handler: string}
  | {type: 'invalid'; reason: string}

/** The preStop handler recorded on a container (io.kubernetes.container.preStopHandler), parsed. */
export function preStopHandlerOf(annotations: StringMap): PreStopHook | undefined {
  return parsePreStopHandler(annotations[ContainerAnnotation.preStopHandler])
}

/** The container's ports recorded in io.kubernetes.container.ports (named ports of httpGet hooks); [] when absent or unreadable. */
export function containerPortsOf(annotations: StringMap): Array<{name?: string; containerPort: number}> {
  try {
    const ports: unknown = JSON.parse(annotations[ContainerAnnotation.ports] ?? '[]')
    if (!Array.isArray(ports)) return []
    return ports
      .filter((port): port is {name?: unknown; containerPort: number} => typeof port?.containerPort === 'number')
      .map((port) =>
        typeof port.name === 'string' ? {name: port.name, containerPort: port.containerPort} : {containerPort: port.containerPort},
      )
  } catch {
    return []
  }
}

type JsonObject = Record<string, unknown>
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value)
const isPort = (value: unknown): value is number | string =>
  (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && value !== '')

/** Parses the io.kubernetes.container.preStopHandler annotation (JSON of a Kubernetes LifecycleHandler). */
export function parsePreStopHandler(value: string | undefined): PreStopHook | undefined {
  if (value === undefined || value.trim() === '' || value.trim() === 'null') return undefined
  let handler: unknown
  try {
    handler = JSON.parse(value)
  } catch (error) {
    return {type: 'invalid', reason: `not JSON (${(error as Error).message})`}
  }

  if (!isObject(handler)) return {type: 'invalid', reason: 'not a LifecycleHandler object'}
  const {exec, httpGet, sleep, tcpSocket, ...others} = handler
  if (exec !== undefined && exec !== null) {
    const command = isObject(exec) ? exec.command : undefined
    if (!Array.isArray(command) || command.length === 0 || !command.every((part) => typeof part === 'string')) {
      return {type: 'invalid', reason: 'exec.command must be a non-empty list of strings'}
    }

    return {type: 'exec', command}
  }

  if (isObject(httpGet)) {
    if (!isPort(httpGet.port)) return {type: 'invalid', reason: 'httpGet.port must be a port number or name'}
    const headers = Array.isArray(httpGet.httpHeaders) ? httpGet.httpHeaders.filter(isObject) : []
    return {
      type: 'node',
      handler: {
        httpGet: {
          path: typeof httpGet.path === 'string' && httpGet.path !== '' ? httpGet.path : '/',
          port: httpGet.port,
          host: typeof httpGet.host === 'string' && httpGet.host !== '' ? httpGet.host : undefined,
          scheme: httpGet.scheme === 'HTTPS' ? 'HTTPS' : 'HTTP',
          httpHeaders: headers.map((header) => ({name: String(header.name ?? ''), value: String(header.value ?? '')})),
        },
      },
    }
  }

  if (isObject(sleep)) {
    if (typeof sleep.seconds !== 'number' || !Number.isInteger(sleep.seconds) || sleep.seconds < 0) {
      return {type: 'invalid', reason: 'sleep.seconds must be a non-negative integer'}
    }

    return {type: 'node', handler: {sleep: {seconds: sleep.seconds}}}
  }

  if (isObject(tcpSocket)) {
    return {type: 'node', handler: {tcpSocket: {port: isPort(tcpSocket.port) ? tcpSocket.port : 0}}}
  }

  const kinds = Object.keys(others).filter((key) => others[key] !== undefined && others[key] !== null)
  if (kinds.length === 0) return undefined
  return {type: 'unsupported', handler: kinds.join(', ')}
}
