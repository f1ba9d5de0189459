/**
 * The kubelet's createPodSandbox (kuberuntime_sandbox.go): generatePodSandboxConfig, the log
 * directory, RunPodSandbox with the runtime handler, then PodSandboxStatus for the pod IP.
 */
import {mkdir} from 'node:fs/promises'
import {dirname} from 'node:path'

import {runtimeCgroupDriver} from '../../cri/cgroup-driver.js'
import type {CallOptions, CriClient, RuntimeRequest} from '../../cri/client.js'
import type {PodModel} from '../../manifest/model.js'
import type {NamespaceMode, PodSandbox, PodSandboxStatus, Protocol, SecurityProfile_ProfileType} from '../../../generated/runtime/v1/api.js'
import {type EventSink, warningEvent} from '../../kube/events.js'
import {buildPodLogsDirectory, podDescription, podFullName, sandboxIps} from '../../kube/helpers.js'
import {newPodAnnotations, newPodLabels, podDirectoryOf, PodLabel} from '../../kube/labels.js'
import {kernelHostname, podHostnameAndDomain} from '../../manifest/pod-spec.js'
import type {NodeDownward} from '../core/env.js'
import {markPodLogDirectory} from '../core/owned-logs.js'
import {podDirectory} from '../core/pod-directory.js'
import {asPodFailure, PodFailedError, PodFailureReason} from '../core/reasons.js'
import {linuxResources, resourceListValues, sandboxResources} from '../core/resources.js'
import {sandboxSecurityContext} from '../core/security-context.js'
import {podCgroupParent} from '../core/pod-cgroup.js'
import {ensureUserNamespace, recordedUserNamespace, usernsOptions} from './user-namespace.js'

export type SandboxConfig = NonNullable<RuntimeRequest<'runPodSandbox'>['config']>

export interface SandboxConfigOptions {
  attempt: number
  logsRoot: string
  /** Contents of the host's resolv.conf (the kubelet's --resolv-conf), for dnsPolicy Default/ClusterFirst. */
  hostResolvConf: string
  /** Root of the pod directories; recorded on the sandbox so `kill` removes the pod's directory too. */
  podDirRoot: string
}

/** `<logs root>/<namespace>_<name>_<uid>` (or a crictl config's explicit log_directory). */
export function podLogDirectory(pod: PodModel, logsRoot: string): string {
  return pod.logDirectory ?? buildPodLogsDirectory(logsRoot, pod.namespace, pod.name, pod.uid)
}

/** GeneratePodHostNameAndDomain's hostname (without the domain): the name /etc/hosts maps the pod IP to. */
export function podHostname(pod: PodModel): string {
  return podHostnameAndDomain(pod).hostname
}

/** Namespace modes (runtimeutil.NamespacesForPod): NODE for host namespaces; PID is per container unless shared. */
export function podNamespaceOptions(pod: PodModel): {network: NamespaceMode; pid: NamespaceMode; ipc: NamespaceMode; targetId?: string} {
  const mode = (value: string) => value as NamespaceMode
  // A crictl pod config's namespace_options go to the runtime as crictl sends them.
  const given = pod.namespaceOptions
  if (given)
    return {network: mode(given.network), pid: mode(given.pid), ipc: mode(given.ipc), ...(given.targetId ? {targetId: given.targetId} : {})}
  return {
    network: mode(pod.hostNetwork ? 'NODE' : 'POD'),
    pid: mode(pod.hostPID ? 'NODE' : pod.shareProcessNamespace ? 'POD' : 'CONTAINER'),
    ipc: mode(pod.hostIPC ? 'NODE' : 'POD'),
  }
}

export interface ResolvConf {
  servers: string[]
  searches: string[]
  options: string[]
}

export function parseResolvConf(text: string): ResolvConf {
  const result: ResolvConf = {servers: [], searches: [], options: []}
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim()
    const [keyword, ...fields] = line.split(/\s+/)
    if (keyword === 'nameserver' && fields[0]) result.servers.push(fields[0])
    // The last search line wins, as in the resolver.
    else if (keyword === 'search') result.searches = fields
    else if (keyword === 'options') result.options.push(...fields)
  }

  return result
}

/**
 * The kubelet's GetPodDNS without cluster DNS: ClusterFirst falls back to Default (the host's
 * resolv.conf), None uses only dnsConfig; dnsConfig is appended (servers and searches
 * de-duplicated, options merged by name).
 */
export function podDnsConfig(pod: PodModel, hostResolvConf: string): ResolvConf {
  const base = pod.dnsPolicy === 'None' ? {servers: [], searches: [], options: []} : parseResolvConf(hostResolvConf)
  const extra = pod.dnsConfig
  if (!extra) return base
  const unique = (values: string[]) => [...new Set(values)]
  const options = new Map<string, string>()
  for (const option of base.options) {
    const colon = option.indexOf(':')
    if (colon === -1) options.set(option, '')
    else options.set(option.slice(0, colon), option.slice(colon + 1))
  }

  for (const option of extra.options) options.set(option.name, option.value ?? '')
  return {
    servers: unique([...base.servers, ...extra.nameservers]),
    searches: unique([...base.searches, ...extra.searches]),
    options: [...options].map(([name, value]) => (value === '' ? name : `${name}:${value}`)),
  }
}

/**
 * Port mappings for every declared port of every app container (kubecontainer.MakePortMappings,
 * de-duplicated per container by name); runtimes only act on those with a hostPort.
 */
function podPortMappings(pod: PodModel): NonNullable<SandboxConfig['portMappings']> {
  const mappings: NonNullable<SandboxConfig['portMappings']> = []
  for (const container of pod.containers) {
    const names = new Set<string>()
    for (const port of container.ports) {
      const family = port.hostIP === undefined ? 'any' : port.hostIP.includes(':') ? 'v6' : 'v4'
      const key = port.name ?? `${family}-${port.protocol}-${port.hostIP ?? ''}:${port.containerPort}`
      if (names.has(key)) continue
      names.add(key)
      mappings.push({
        protocol: port.protocol as Protocol,
        containerPort: port.containerPort,
        hostPort: port.hostPort ?? 0,
        hostIp: port.hostIP ?? '',
      })
    }
  }

  return mappings
}

/** The sandbox is privileged when any container is (the runtime refuses privileged containers otherwise). */
function hasPrivilegedContainer(pod: PodModel): boolean {
  return [...pod.initContainers, ...pod.containers].some((container) => container.securityContext?.privileged === true)
}

export function generatePodSandboxConfig(pod: PodModel, options: SandboxConfigOptions): SandboxConfig {
  const dns = podDnsConfig(pod, options.hostResolvConf)
  const security = sandboxSecurityContext(pod)
  const overhead = pod.overhead && resourceListValues(pod.overhead)
  return {
    metadata: {name: pod.name, uid: pod.uid, namespace: pod.namespace, attempt: options.attempt},
    // Host-network pods keep the node's hostname.
    hostname: pod.hostNetwork ? '' : kernelHostname(pod),
    logDirectory: podLogDirectory(pod, options.logsRoot),
    dnsConfig: dns,
    portMappings: podPortMappings(pod),
    labels: newPodLabels(pod),
    annotations: newPodAnnotations(pod, podDirectory(options.podDirRoot, pod.uid)),
    linux: {
      cgroupParent: pod.cgroupParent ?? '',
      securityContext: {
        ...security.securityContext,
        namespaceOptions: {...podNamespaceOptions(pod), ...recordedUsernsOptions(pod, options.podDirRoot)},
        privileged: hasPrivilegedContainer(pod),
        // The kubelet always runs the sandbox (pause) under the runtime's default seccomp profile.
        seccomp: {profileType: 'RuntimeDefault' as SecurityProfile_ProfileType},
      },
      sysctls: security.sysctls,
      // convertOverheadToLinuxResources: the overhead's limits (cpu quota, memory) as the runtime sizes them.
      overhead: overhead ? linuxResources(overhead.cpuMilli, overhead.cpuMilli, overhead.memoryBytes) : {},
      resources: sandboxResources(pod),
    },
  }
}

/** hostUsers: false: the user namespace recorded for the pod (a sandbox made before; createPodSandbox records it first). */
function recordedUsernsOptions(pod: PodModel, podDirRoot: string): {usernsOptions?: ReturnType<typeof usernsOptions>} {
  const mappings = pod.hostUsers === false && podDirRoot ? recordedUserNamespace(podDirRoot, pod.uid) : undefined
  return mappings ? {usernsOptions: usernsOptions(mappings)} : {}
}

/** What every container of a pod needs from its sandbox, built once when the sandbox exists. */
export interface SandboxContext {
  id: string
  config: SandboxConfig
  runtimeHandler: string
  /** The kubelet-managed /etc/hosts, when the pod has an IP. */
  etcHostsPath?: string
  /** Host path of each volume, by name. */
  volumePaths: ReadonlyMap<string, string>
  /** The pod's IPs (status.podIP / podIPs of the downward API); empty for host-network pods. */
  ips?: readonly string[]
  /** The node as the downward API sees it (spec.nodeName, status.hostIP, allocatable). */
  node?: NodeDownward
}

export interface CreatedSandbox {
  sandboxId: string
  /** Pod IPs (network.ip then additional IPs); empty for host-network pods, as the kubelet reports them. */
  ips: string[]
  status?: PodSandboxStatus
}

export interface CreateSandboxOptions {
  runtimeHandler: string
  events: EventSink
  signal?: AbortSignal
  /** Called with the ID as soon as the runtime returns it, so an interrupt can still roll it back. */
  onCreated?: (sandboxId: string) => void
}

/** mkdir -p the log directory, RunPodSandbox, PodSandboxStatus (the kubelet's order and messages). */
export async function createPodSandbox(
  client: CriClient,
  pod: PodModel,
  config: SandboxConfig,
  options: CreateSandboxOptions,
): Promise<CreatedSandbox> {
  const described = podDescription(pod.name, pod.namespace, pod.uid)
  const object = podFullName(pod.name, pod.namespace)
  try {
    const created = await mkdir(config.logDirectory ?? '', {recursive: true, mode: 0o755})
    // What garbage collection later proves podctl's (a directory that was already there stays unmarked).
    await markPodLogDirectory(config.logDirectory ?? '', created !== undefined, {uid: pod.uid, runtimeEndpoint: client.runtimeEndpoint})
  } catch (error) {
    throw new PodFailedError(
      `Create pod log directory for pod "${described}" failed: ${(error as Error).message}; pass --pod-logs-root to use another directory`,
      {reason: PodFailureReason.CreatePodSandboxError},
    )
  }

  await placeInPodCgroup(client, pod, config)
  await placeInUserNamespace(pod, config)
  let sandboxId: string
  try {
    const response = await client.runtime('runPodSandbox', {config, runtimeHandler: options.runtimeHandler}, {signal: options.signal})
    sandboxId = response.podSandboxId
  } catch (error) {
    const message = (error as Error).message
    options.events(warningEvent('FailedCreatePodSandBox', `Failed to create pod sandbox: ${message}`, object))
    throw asPodFailure(error, `Failed to create sandbox for pod "${described}": ${message}`, {
      reason: PodFailureReason.CreatePodSandboxError,
    })
  }

  if (!sandboxId) {
    throw new PodFailedError(`PodSandboxId is not set for sandbox "${described}"`, {reason: PodFailureReason.CreatePodSandboxError})
  }

  options.onCreated?.(sandboxId)
  try {
    const {status} = await client.runtime('podSandboxStatus', {podSandboxId: sandboxId, verbose: false}, {signal: options.signal})
    return {sandboxId, ips: pod.hostNetwork ? [] : sandboxIps(status), status}
  } catch (error) {
    const message = (error as Error).message
    options.events(warningEvent('FailedPodSandBoxStatus', `Unable to get pod sandbox status: ${message}`, object))
    throw asPodFailure(error, `Unable to get pod sandbox status for pod "${described}": ${message}`, {
      reason: PodFailureReason.CreatePodSandboxError,
    })
  }
}

/**
 * The kubelet's cgroup parent for a Pod manifest's sandbox (core/pod-cgroup.ts), in the form of the
 * runtime's cgroup driver; set on `config` so the containers' sandbox_config says the same. A crictl
 * config's cgroup_parent (empty included) goes as written; a runtime whose driver cannot be learnt
 * gets none, as before, rather than a parent of the wrong form (which fails RunPodSandbox).
 */
async function placeInPodCgroup(client: CriClient, pod: PodModel, config: SandboxConfig): Promise<void> {
  if (pod.cgroupParent !== undefined || !config.linux || config.linux.cgroupParent) return
  const driver = await runtimeCgroupDriver(client)
  if (driver) config.linux.cgroupParent = podCgroupParent(pod, driver)
}

/** hostUsers: false: the pod's ID range (user-namespace.ts), allocated and recorded in its directory on its first sandbox. */
async function placeInUserNamespace(pod: PodModel, config: SandboxConfig): Promise<void> {
  const options = config.linux?.securityContext?.namespaceOptions
  const directory = podDirectoryOf((config.annotations ?? {}) as Record<string, string>)
  if (pod.hostUsers !== false || !options || options.usernsOptions || !directory) return
  try {
    options.usernsOptions = usernsOptions(await ensureUserNamespace(dirname(directory), pod))
  } catch (error) {
    throw new PodFailedError(
      `cannot give pod "${podDescription(pod.name, pod.namespace, pod.uid)}" a user namespace: ${(error as Error).message}`,
      {
        reason: PodFailureReason.CreatePodSandboxError,
      },
    )
  }
}

/** Every sandbox of this pod (all attempts), found by the uid label so nothing half-made escapes. */
export async function podSandboxes(
  client: CriClient,
  pod: Pick<PodModel, 'name' | 'namespace' | 'uid'>,
  options: CallOptions = {},
): Promise<PodSandbox[]> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.uid]: pod.uid}}}, options)
  const byId = new Map(items.map((sandbox) => [sandbox.id, sandbox]))
  return [...byId.values()].filter((sandbox) => sandbox.metadata?.name === pod.name && sandbox.metadata?.namespace === pod.namespace)
}

/** One ListPodSandbox for all pods: name_namespace → its sandboxes (pods without any are absent). */
export async function sandboxesByFullName(
  client: CriClient,
  pods: ReadonlyArray<{name: string; namespace: string}>,
): Promise<Map<string, PodSandbox[]>> {
  const wanted = new Set(pods.map((pod) => podFullName(pod.name, pod.namespace)))
  const {items} = await client.runtime('listPodSandbox', {})
  const found = new Map<string, PodSandbox[]>()
  for (const sandbox of items) {
    const key = podFullName(sandbox.metadata?.name ?? '', sandbox.metadata?.namespace ?? '')
    if (wanted.has(key)) found.set(key, [...(found.get(key) ?? []), sandbox])
  }

  return found
}
