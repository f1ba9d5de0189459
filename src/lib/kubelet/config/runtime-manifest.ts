/**
 * A v1 Pod rebuilt from what the runtime has, for `podctl export` of a pod with no record (made by
 * the kubelet, crictl, or a podctl whose pod directory is gone). The kubelet's way back from a
 * container: the io.kubernetes.* labels and annotations (names, ports, termination message,
 * grace period, preStop), the CRI status (image, mounts) and the runtime's verbose config (command,
 * args, env, working directory, resources, security context); podctl's own io.podctl.* annotations
 * add the restart policy, container types and probes where podctl made the pod. What none of them
 * holds is named in `unrecovered`, and the values of env variables taken from a Secret never leave.
 */
import {compact, handlerManifest, type ManifestObject, probeManifest} from '../../manifest/container-manifest.js'
import type {LifecycleHandler, ProbeModel} from '../../manifest/model.js'
import {userAnnotations} from '../../manifest/pod-manifest.js'
import type {ContainerStatus, PodSandboxStatus} from '../../../generated/runtime/v1/api.js'
import {ContainerAnnotation, containerName, containerTypeOf, PodctlAnnotation, secretEnvNamesOf, sidecarIndexOf} from '../../kube/labels.js'
import {RuntimeVolumes} from './runtime-volumes.js'

/** One container of the pod as the runtime reports it: its CRI status and the verbose info's `config` (plain JSON). */
export interface RuntimeContainer {
  status: ContainerStatus
  config?: Record<string, unknown>
}

export interface RuntimePod {
  sandbox: PodSandboxStatus
  /** The verbose info's `config` of the sandbox (containerd: the PodSandboxConfig as JSON). */
  sandboxConfig?: Record<string, unknown>
  containers: RuntimeContainer[]
}

export interface RebuiltPod {
  pod: ManifestObject
  /** Fields the runtime does not hold (the manifest leaves them to their defaults). */
  unrecovered: string[]
  /** One line each: what was recovered only in part. */
  notes: string[]
  /** Env variables left out because their values came from a Secret, as `container: NAME`. */
  secretEnv: string[]
}

/** Env variables the kubelet adds itself (the service links of the API server's own Service). */
const KUBELET_ENV =
  /^KUBERNETES_(SERVICE_HOST|SERVICE_PORT|SERVICE_PORT_HTTPS|PORT|PORT_443_TCP|PORT_443_TCP_PROTO|PORT_443_TCP_PORT|PORT_443_TCP_ADDR)$/
/** An image ID (CRI-O's have no sha256: prefix): the runtime lost the name the pod asked for. */
const IMAGE_ID = /^(sha256:)?[0-9a-f]{64}$/
const MEBIBYTE = 1024 * 1024

type JsonObject = Record<string, unknown>
const objectOf = (value: unknown): JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {}
const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined
const numberOf = (value: unknown): number | undefined =>
  typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : undefined
const parsed = (text: string | undefined): unknown => {
  try {
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The container's resources from the CRI's Linux resources: limits from the quota and memory limit, the CPU request from the shares. */
function resourcesOf(config: JsonObject): ManifestObject | undefined {
  const resources = objectOf(objectOf(config.linux).resources)
  const quota = numberOf(resources.cpu_quota) ?? 0
  const period = numberOf(resources.cpu_period) ?? 0
  const memory = numberOf(resources.memory_limit_in_bytes) ?? 0
  const shares = numberOf(resources.cpu_shares) ?? 0
  const limits = compact({
    cpu: quota > 0 && period > 0 ? `${Math.ceil((quota * 1000) / period)}m` : undefined,
    memory: memory > 0 ? (memory % MEBIBYTE === 0 ? `${memory / MEBIBYTE}Mi` : String(memory)) : undefined,
  })
  // 2 shares is the kubelet's floor for a container without a CPU request.
  const requests = compact({cpu: shares > 2 ? `${Math.round((shares * 1000) / 1024)}m` : undefined})
  return compact({limits, requests})
}

function securityContextOf(config: JsonObject): ManifestObject | undefined {
  const context = objectOf(objectOf(config.linux).security_context)
  const capabilities = objectOf(context.capabilities)
  const caps = compact({add: strings(capabilities.add_capabilities), drop: strings(capabilities.drop_capabilities)})
  return compact({
    privileged: context.privileged === true ? true : undefined,
    runAsUser: numberOf(objectOf(context.run_as_user).value),
    runAsGroup: numberOf(objectOf(context.run_as_group).value),
    readOnlyRootFilesystem: context.readonly_rootfs === true ? true : undefined,
    capabilities: caps,
  })
}

function imageOf(status: ContainerStatus, notes: string[], name: string): string {
  const image = status.image?.userSpecifiedImage || status.image?.image || ''
  if (image !== '' && !IMAGE_ID.test(image)) return image
  if (status.imageRef !== '') {
    notes.push(`container ${name}: the runtime knows its image only by digest; exported as ${status.imageRef}`)
    return status.imageRef
  }

  return image
}

/** The newest container of each name, app and init apart, in the order the kubelet started them. */
function containersByName(containers: readonly RuntimeContainer[]): {init: RuntimeContainer[]; app: RuntimeContainer[]} {
  const newest = new Map<string, RuntimeContainer>()
  const first = new Map<string, string>()
  for (const container of containers) {
    const name = containerName(container.status)
    const seen = newest.get(name)
    if (!seen || container.status.createdAt > seen.status.createdAt) newest.set(name, container)
    const earliest = first.get(name)
    if (earliest === undefined || container.status.createdAt < earliest) first.set(name, container.status.createdAt)
  }

  const byStart = (a: RuntimeContainer, b: RuntimeContainer) => {
    const [sa, sb] = [sidecarIndexOf(a.status.annotations), sidecarIndexOf(b.status.annotations)]
    if (sa !== undefined && sb !== undefined) return sa - sb
    return (first.get(containerName(a.status)) ?? '').localeCompare(first.get(containerName(b.status)) ?? '')
  }

  const all = [...newest.values()].sort(byStart)
  return {
    init: all.filter((container) => containerTypeOf(container.status.annotations) === 'init'),
    app: all.filter((container) => containerTypeOf(container.status.annotations) === 'app'),
  }
}

interface Rebuilding {
  volumes: RuntimeVolumes
  notes: string[]
  secretEnv: string[]
  probesKnown: boolean
}

function containerOf({status, config = {}}: RuntimeContainer, state: Rebuilding): ManifestObject {
  const name = containerName(status)
  const {annotations} = status
  const secretNames = new Set(secretEnvNamesOf(annotations))
  const env = (Array.isArray(config.envs) ? config.envs : []).map(objectOf).flatMap((entry) => {
    const key = typeof entry.key === 'string' ? entry.key : ''
    if (key === '' || KUBELET_ENV.test(key)) return []
    if (secretNames.has(key)) {
      state.secretEnv.push(`${name}: ${key}`)
      return []
    }

    return [{name: key, value: typeof entry.value === 'string' ? entry.value : ''}]
  })
  const probes = objectOf(parsed(annotations[PodctlAnnotation.probes])) as Record<string, ProbeModel | undefined>
  if (annotations[PodctlAnnotation.probes] !== undefined) state.probesKnown = true
  const preStop = parsed(annotations[ContainerAnnotation.preStopHandler]) as LifecycleHandler | undefined
  const ports = parsed(annotations[ContainerAnnotation.ports])
  const terminationMessagePath = annotations[ContainerAnnotation.terminationMessagePath]
  const mounts = state.volumes.mountsOf(name, status.mounts, terminationMessagePath)
  return compact({
    name,
    image: imageOf(status, state.notes, name),
    command: strings(config.command),
    args: strings(config.args),
    workingDir: typeof config.working_dir === 'string' && config.working_dir !== '' ? config.working_dir : undefined,
    env: env.length > 0 ? env : undefined,
    ports: Array.isArray(ports) && ports.length > 0 ? ports : undefined,
    resources: resourcesOf(config),
    securityContext: securityContextOf(config),
    lifecycle: preStop && typeof preStop === 'object' ? {preStop: handlerManifest(preStop)} : undefined,
    livenessProbe: probeManifest(probes.livenessProbe),
    readinessProbe: probeManifest(probes.readinessProbe),
    startupProbe: probeManifest(probes.startupProbe),
    restartPolicy: sidecarIndexOf(annotations) === undefined ? undefined : 'Always',
    volumeMounts: mounts.length > 0 ? mounts : undefined,
    terminationMessagePath,
    terminationMessagePolicy: annotations[ContainerAnnotation.terminationMessagePolicy],
    stdin: config.stdin === true ? true : undefined,
    stdinOnce: config.stdin_once === true ? true : undefined,
    tty: config.tty === true ? true : undefined,
  })!
}

/** What the runtime never holds, whatever made the pod. */
const NEVER_ON_THE_RUNTIME = [
  'imagePullPolicy',
  'lifecycle.postStart',
  'resources.requests.memory',
  'env sources (configMapKeyRef, secretKeyRef, fieldRef: the values as the runtime has them)',
  'dnsPolicy and dnsConfig',
  'imagePullSecrets',
  'serviceAccountName',
]

/** The pod's Linux namespaces as the Pod fields that ask for them. */
function namespaceFields(sandbox: PodSandboxStatus): ManifestObject {
  const namespaces = sandbox.linux?.namespaces?.options
  return {
    hostNetwork: namespaces?.network === 'NODE' ? true : undefined,
    hostPID: namespaces?.pid === 'NODE' ? true : undefined,
    hostIPC: namespaces?.ipc === 'NODE' ? true : undefined,
    shareProcessNamespace: namespaces?.pid === 'POD' ? true : undefined,
  }
}

/** Name, namespace, the user's labels and annotations (the kubelet's and podctl's keys left out). */
function metadataOf(sandbox: PodSandboxStatus): ManifestObject | undefined {
  const labels = Object.fromEntries(Object.entries(sandbox.labels).filter(([key]) => !key.startsWith('io.kubernetes.')))
  return compact({
    name: sandbox.metadata?.name ?? '',
    namespace: sandbox.metadata?.namespace,
    labels: Object.keys(labels).length > 0 ? labels : undefined,
    annotations: userAnnotations(sandbox.annotations),
  })
}

/** The pod as the runtime has it: a v1 Pod and the list of what it could not recover. */
export function rebuildPod(runtime: RuntimePod): RebuiltPod {
  const {sandbox, sandboxConfig = {}} = runtime
  const state: Rebuilding = {volumes: new RuntimeVolumes(), notes: [], secretEnv: [], probesKnown: false}
  const {init, app} = containersByName(runtime.containers)
  const initContainers = init.map((container) => containerOf(container, state))
  const containers = app.map((container) => containerOf(container, state))
  const unrecovered = [...(state.probesKnown ? [] : ['probes']), ...NEVER_ON_THE_RUNTIME]
  const recordedPolicy = sandbox.annotations[PodctlAnnotation.restartPolicy]
  if (recordedPolicy === undefined) unrecovered.unshift('restartPolicy')
  if (runtime.containers.length === 0) state.notes.push('the pod has no containers left on the runtime; the manifest has none either')
  const name = sandbox.metadata?.name ?? ''
  const hostname = typeof sandboxConfig.hostname === 'string' && sandboxConfig.hostname !== name ? sandboxConfig.hostname : undefined
  const grace = numberOf(runtime.containers[0]?.status.annotations[ContainerAnnotation.podTerminationGracePeriod])
  const volumes = state.volumes.list()
  const spec = compact({
    restartPolicy: recordedPolicy,
    terminationGracePeriodSeconds: grace,
    ...namespaceFields(sandbox),
    hostname,
    runtimeClassName: sandbox.runtimeHandler || undefined,
    initContainers: initContainers.length > 0 ? initContainers : undefined,
    containers,
    volumes: volumes.length > 0 ? volumes : undefined,
  })
  return {
    pod: {apiVersion: 'v1', kind: 'Pod', metadata: metadataOf(sandbox), spec},
    unrecovered,
    notes: [...state.notes, ...state.volumes.notes],
    secretEnv: state.secretEnv,
  }
}
