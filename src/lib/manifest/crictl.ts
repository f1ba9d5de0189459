import {randomUUID} from 'node:crypto'

import {describe, FieldReader, type Json, UINT32} from './fields.js'
import type {ContainerModel, ContainerPortModel, NamespaceOptionsModel, PodModel, PortProtocol, VolumeModel} from './model.js'
import {dns1123Label, dns1123Subdomain, envVarName, labelValue, qualifiedName} from './names.js'
import {checkAnnotationSize, checkResourceTotals} from './limits.js'
import {DEFAULT_NAMESPACE} from '../kube/helpers.js'
import {DEFAULT_TERMINATION_MESSAGE_PATH} from './pod-fields.js'
import {validSysctlName} from './security-context.js'

/**
 * crictl's pair of config files (`crictl run container-config.json pod-config.json`), read with
 * crictl's snake_case field names, translated into the same model as a Pod manifest so the pod
 * gets the kubelet's labels (io.kubernetes.*) and podctl can find, kill and report it later.
 * crictl never restarts anything, so the pod's restartPolicy is Never.
 */

// Enums arrive as numbers from Go's encoding/json (crictl's own format) or as names; both are accepted.
const NAMESPACE_MODES = ['POD', 'CONTAINER', 'NODE', 'TARGET'] as const
const PROTOCOLS: readonly PortProtocol[] = ['TCP', 'UDP', 'SCTP']

const POD_CONFIG_RULE = {
  supported: ['metadata', 'hostname', 'log_directory', 'dns_config', 'port_mappings', 'labels', 'annotations', 'linux'],
  unsupported: {windows: ''},
}
const POD_METADATA_RULE = {supported: ['name', 'namespace', 'uid', 'attempt']}
const DNS_RULE = {supported: ['servers', 'searches', 'options']}
const PORT_MAPPING_RULE = {supported: ['protocol', 'container_port', 'host_port', 'host_ip']}
const POD_LINUX_RULE = {
  supported: ['security_context', 'cgroup_parent', 'sysctls'],
  // Not a field of LinuxPodSandboxConfig, yet in crictl's own example config; Go's decoder ignores it, and so does podctl.
  ignored: ['namespaces'],
  unsupported: {
    overhead: '',
    resources: 'set linux.resources in the container config',
  },
}
const POD_SECURITY_RULE = {
  supported: ['namespace_options'],
  unsupported: {
    privileged: 'set linux.security_context.privileged in the container config; the sandbox follows it',
    run_as_user: 'set it in the container config',
    run_as_group: 'set it in the container config',
    readonly_rootfs: '',
    selinux_options: '',
    supplemental_groups: '',
    seccomp: '',
    apparmor: '',
    seccomp_profile_path: '',
  },
}
const NAMESPACE_OPTIONS_RULE = {supported: ['network', 'pid', 'ipc', 'target_id'], unsupported: {userns_options: ''}}

const CONTAINER_CONFIG_RULE = {
  supported: [
    'metadata',
    'image',
    'command',
    'args',
    'working_dir',
    'envs',
    'mounts',
    'labels',
    'annotations',
    'log_path',
    'linux',
    'stdin',
    'stdin_once',
    'tty',
  ],
  unsupported: {
    devices: '',
    windows: '',
    CDI_devices: '',
    stop_signal: '',
  },
}
const CONTAINER_METADATA_RULE = {supported: ['name', 'attempt']}
const IMAGE_RULE = {supported: ['image', 'user_specified_image'], unsupported: {annotations: '', runtime_handler: '', image_ref: ''}}
const ENV_RULE = {supported: ['key', 'value']}
const MOUNT_RULE = {
  supported: ['container_path', 'host_path', 'readonly', 'selinux_relabel', 'propagation'],
  unsupported: {uidMappings: '', gidMappings: '', recursive_read_only: '', image: '', image_sub_path: ''},
}
const CONTAINER_LINUX_RULE = {supported: ['resources', 'security_context']}
const RESOURCES_RULE = {
  supported: ['cpu_period', 'cpu_quota', 'cpu_shares', 'memory_limit_in_bytes'],
  unsupported: {
    oom_score_adj: 'podctl sets it from the QoS class, as the kubelet does',
    cpuset_cpus: '',
    cpuset_mems: '',
    hugepage_limits: '',
    unified: '',
    memory_swap_limit_in_bytes: '',
  },
}
const CONTAINER_SECURITY_RULE = {
  supported: ['capabilities', 'privileged', 'run_as_user', 'run_as_group', 'readonly_rootfs', 'no_new_privs', 'namespace_options'],
  unsupported: {
    selinux_options: '',
    run_as_username: 'use run_as_user',
    supplemental_groups: '',
    masked_paths: '',
    readonly_paths: '',
    seccomp: '',
    apparmor: '',
    apparmor_profile: '',
    seccomp_profile_path: '',
  },
}
const CAPABILITY_RULE = {supported: ['add_capabilities', 'drop_capabilities'], unsupported: {add_ambient_capabilities: ''}}
const INT64_VALUE_RULE = {supported: ['value']}

export interface CrictlSources {
  podConfig: Json
  podSource: string
  containerConfig: Json
  containerSource: string
}

export function parseCrictlConfigs(input: CrictlSources, options: {newUid?: () => string} = {}): PodModel {
  const {pod, ports} = parseCrictlPodConfig(input.podConfig, input.podSource, options)
  const {container, volumes} = parseCrictlContainerConfig(input.containerConfig, input.containerSource)
  container.ports = ports
  return {...pod, volumes, containers: [container]}
}

/**
 * crictl's pod sandbox config alone (`crictl runp pod-config.json`): a pod with no containers; its
 * port_mappings come back apart, as crictl puts them on the sandbox rather than on a container.
 */
export function parseCrictlPodConfig(
  document: Json,
  source: string,
  options: {newUid?: () => string} = {},
): {pod: PodModel; ports: ContainerPortModel[]} {
  const pr: FieldReader = new FieldReader(source)
  const pod = pr.object(document, '', POD_CONFIG_RULE)
  if (pod.metadata === undefined || pod.metadata === null) pr.fail('metadata', 'is required (name and namespace)')
  const metadata = pr.object(pod.metadata, 'metadata', POD_METADATA_RULE)
  const name = pr.requiredString(metadata.name, 'metadata.name')
  problem(pr, 'metadata.name', name, dns1123Subdomain(name))
  const namespace = pr.string(metadata.namespace, 'metadata.namespace') || DEFAULT_NAMESPACE
  problem(pr, 'metadata.namespace', namespace, dns1123Label(namespace))
  const givenUid = pr.string(metadata.uid, 'metadata.uid') || undefined
  if (givenUid) problem(pr, 'metadata.uid', givenUid, labelValue(givenUid))
  const attempt = pr.integer(metadata.attempt, 'metadata.attempt', UINT32)

  const {namespaces, cgroupParent, sysctls} = readPodLinux(pr, pod.linux)

  const dns = pod.dns_config === undefined || pod.dns_config === null ? undefined : pr.object(pod.dns_config, 'dns_config', DNS_RULE)
  const dnsConfig = dns && {
    nameservers: pr.strings(dns.servers, 'dns_config.servers'),
    searches: pr.strings(dns.searches, 'dns_config.searches'),
    options: pr.strings(dns.options, 'dns_config.options').map((option) => {
      const colon = option.indexOf(':')
      return colon === -1 ? {name: option} : {name: option.slice(0, colon), value: option.slice(colon + 1)}
    }),
  }

  const ports: ContainerPortModel[] = pr.list(pod.port_mappings, 'port_mappings').map((entry, index) => {
    const where = `port_mappings[${index}]`
    const mapping = pr.object(entry, where, PORT_MAPPING_RULE)
    const containerPort = pr.integer(mapping.container_port, `${where}.container_port`, {min: 1, max: 65_535})
    if (containerPort === undefined) pr.fail(`${where}.container_port`, 'is required')
    return {
      containerPort,
      hostPort: pr.integer(mapping.host_port, `${where}.host_port`, {min: 0, max: 65_535}) || undefined,
      protocol: readEnum(pr, mapping.protocol, `${where}.protocol`, PROTOCOLS) ?? 'TCP',
      hostIP: pr.string(mapping.host_ip, `${where}.host_ip`) || undefined,
    }
  })

  const hostname = pr.string(pod.hostname, 'hostname') || undefined
  if (hostname) problem(pr, 'hostname', hostname, dns1123Label(hostname))
  const annotations = pr.stringMap(pod.annotations, 'annotations', (key, _value, path) => keyProblem(pr, path, key))
  checkAnnotationSize(pr, 'annotations', annotations)

  const model: PodModel = {
    source,
    name,
    namespace,
    uid: givenUid ?? (options.newUid ?? randomUUID)(),
    uidGenerated: !givenUid,
    labels: pr.stringMap(pod.labels, 'labels', (key, _value, path) => keyProblem(pr, path, key)),
    annotations,
    restartPolicy: 'Never',
    hostNetwork: namespaces.network === 'NODE',
    hostPID: namespaces.pid === 'NODE',
    hostIPC: namespaces.ipc === 'NODE',
    shareProcessNamespace: namespaces.pid === 'POD',
    // Modes the pod spec cannot say (CONTAINER network or IPC, TARGET, a target_id) go to the runtime as given.
    ...(modelExpresses(namespaces) ? {} : {namespaceOptions: namespaces}),
    ...(sysctls.length > 0 ? {securityContext: {sysctls}} : {}),
    // Always a string: "" (none) is sent as crictl sends it, where a manifest's pod gets the kubelet's parent.
    cgroupParent: cgroupParent ?? '',
    hostname,
    dnsPolicy: dnsConfig && dnsConfig.nameservers.length > 0 ? 'None' : 'Default',
    dnsConfig,
    volumes: [],
    initContainers: [],
    containers: [],
    logDirectory: pr.string(pod.log_directory, 'log_directory') || undefined,
    attempt,
  }
  return {pod: model, ports}
}

/** crictl's container config alone (`crictl create POD container-config.json …`); each mount becomes a hostPath volume. */
export function parseCrictlContainerConfig(document: Json, source: string): {container: ContainerModel; volumes: VolumeModel[]} {
  const cr: FieldReader = new FieldReader(source)
  const volumes: VolumeModel[] = []
  const container = readContainer(cr, document, volumes)
  checkResourceTotals(cr, [container], 'linux.resources')
  checkAnnotationSize(cr, 'annotations', container.extraAnnotations ?? {})
  return {container, volumes}
}

function readContainer(r: FieldReader, document: Json, volumes: VolumeModel[]): ContainerModel {
  const c = r.object(document, '', CONTAINER_CONFIG_RULE)
  if (c.metadata === undefined || c.metadata === null) r.fail('metadata', 'is required (name)')
  const metadata = r.object(c.metadata, 'metadata', CONTAINER_METADATA_RULE)
  const name = r.requiredString(metadata.name, 'metadata.name')
  problem(r, 'metadata.name', name, dns1123Label(name))
  const attempt = r.integer(metadata.attempt, 'metadata.attempt', UINT32)
  if (c.image === undefined || c.image === null) r.fail('image', 'is required (image.image)')
  const image = r.object(c.image, 'image', IMAGE_RULE)
  const imageName = r.requiredString(image.image, 'image.image')

  const env = r.list(c.envs, 'envs').map((entry, index) => {
    const variable = r.object(entry, `envs[${index}]`, ENV_RULE)
    const key = r.requiredString(variable.key, `envs[${index}].key`)
    problem(r, `envs[${index}].key`, key, envVarName(key))
    return {name: key, value: r.string(variable.value, `envs[${index}].value`) ?? ''}
  })

  const volumeMounts = r.list(c.mounts, 'mounts').map((entry, index) => {
    const where = `mounts[${index}]`
    const mount = r.object(entry, where, MOUNT_RULE)
    const containerPath = r.requiredString(mount.container_path, `${where}.container_path`)
    const hostPath = r.requiredString(mount.host_path, `${where}.host_path`)
    if (!hostPath.startsWith('/')) r.fail(`${where}.host_path`, `"${hostPath}" must be an absolute path`)
    if (!containerPath.startsWith('/')) r.fail(`${where}.container_path`, `"${containerPath}" must be an absolute path`)
    const propagation = mount.propagation
    if (propagation !== undefined && propagation !== null && propagation !== 0 && propagation !== 'PROPAGATION_PRIVATE') {
      r.fail(`${where}.propagation`, 'is not supported by podctl; mounts are private')
    }

    if (r.boolean(mount.selinux_relabel, `${where}.selinux_relabel`)) r.fail(`${where}.selinux_relabel`, 'is not supported by podctl')
    const volume = `mount-${index}`
    volumes.push({name: volume, hostPath: {path: hostPath, type: ''}})
    return {name: volume, mountPath: containerPath, readOnly: r.boolean(mount.readonly, `${where}.readonly`) ?? false}
  })

  const linux = r.object(c.linux, 'linux', CONTAINER_LINUX_RULE)
  const resources = r.object(linux.resources, 'linux.resources', RESOURCES_RULE)
  const limits: ContainerModel['resources']['limits'] = {}
  const requests: ContainerModel['resources']['requests'] = {}
  // Go's encoding/json writes int64 as a number; protojson as a decimal string. Either way: int64, not negative.
  const int64 = (value: Json | undefined, path: string) =>
    r.integer(typeof value === 'string' && /^\d+$/.test(value) ? BigInt(value) : value, path, {min: 0})
  const quota = int64(resources.cpu_quota, 'linux.resources.cpu_quota')
  const period = int64(resources.cpu_period, 'linux.resources.cpu_period') || 100_000
  if (quota) limits.cpu = `${Math.ceil((quota * 1000) / period)}m`
  const shares = int64(resources.cpu_shares, 'linux.resources.cpu_shares')
  if (shares) requests.cpu = `${Math.round((shares * 1000) / 1024)}m`
  const memory = int64(resources.memory_limit_in_bytes, 'linux.resources.memory_limit_in_bytes')
  if (memory) limits.memory = String(memory)

  const sc =
    linux.security_context === undefined || linux.security_context === null
      ? undefined
      : r.object(linux.security_context, 'linux.security_context', CONTAINER_SECURITY_RULE)

  const idValue = (value: Json | undefined, path: string) => {
    if (value === undefined || value === null) return
    return r.integer(r.object(value, path, INT64_VALUE_RULE).value, `${path}.value`, {min: 0, max: 2_147_483_647})
  }

  const caps =
    sc && sc.capabilities !== undefined && sc.capabilities !== null
      ? r.object(sc.capabilities, 'linux.security_context.capabilities', CAPABILITY_RULE)
      : undefined
  const noNewPrivs = sc ? r.boolean(sc.no_new_privs, 'linux.security_context.no_new_privs') : undefined
  const securityContext = sc && {
    privileged: r.boolean(sc.privileged, 'linux.security_context.privileged'),
    runAsUser: idValue(sc.run_as_user, 'linux.security_context.run_as_user'),
    runAsGroup: idValue(sc.run_as_group, 'linux.security_context.run_as_group'),
    readOnlyRootFilesystem: r.boolean(sc.readonly_rootfs, 'linux.security_context.readonly_rootfs'),
    allowPrivilegeEscalation: noNewPrivs === undefined ? undefined : !noNewPrivs,
    capabilities: caps && {
      add: r.strings(caps.add_capabilities, 'linux.security_context.capabilities.add_capabilities'),
      drop: r.strings(caps.drop_capabilities, 'linux.security_context.capabilities.drop_capabilities'),
    },
  }

  return {
    name,
    image: imageName,
    // crictl run pulls unless told not to; IfNotPresent keeps a present image (its --no-pull is our policy Never).
    command: r.strings(c.command, 'command', {allowEmpty: true}),
    args: r.strings(c.args, 'args', {allowEmpty: true}),
    workingDir: r.string(c.working_dir, 'working_dir') || undefined,
    env,
    ports: [],
    resources: {limits, requests},
    securityContext,
    lifecycle: {},
    volumeMounts,
    terminationMessagePath: DEFAULT_TERMINATION_MESSAGE_PATH,
    terminationMessagePolicy: 'File',
    extraLabels: r.stringMap(c.labels, 'labels', (key, _value, path) => keyProblem(r, path, key)),
    extraAnnotations: r.stringMap(c.annotations, 'annotations', (key, _value, path) => keyProblem(r, path, key)),
    logPath: r.string(c.log_path, 'log_path') || undefined,
    ...readStreams(r, c),
    ...crictlOwn(r, attempt, sc?.namespace_options),
  }
}

/** LinuxPodSandboxConfig: namespace options, cgroup_parent and sysctls, as crictl sends them. */
function readPodLinux(pr: FieldReader, value: Json | undefined) {
  const linux = pr.object(value, 'linux', POD_LINUX_RULE)
  const security = pr.object(linux.security_context, 'linux.security_context', POD_SECURITY_RULE)
  const namespaces = readNamespaceOptions(pr, security.namespace_options, 'linux.security_context.namespace_options')
  const cgroupParent = pr.string(linux.cgroup_parent, 'linux.cgroup_parent') || undefined
  if (cgroupParent?.includes('..')) pr.fail('linux.cgroup_parent', `"${cgroupParent}" must not contain ".."`)
  const sysctls = Object.entries(pr.stringMap(linux.sysctls, 'linux.sysctls')).map(([key, value]) => {
    if (!validSysctlName(key)) pr.fail('linux.sysctls', `"${key}" is not a valid sysctl name (e.g. net.ipv4.ip_unprivileged_port_start)`)
    return {name: key, value}
  })
  return {namespaces, cgroupParent, sysctls}
}

/** stdin, stdin_once and tty go to CreateContainer as given. */
function readStreams(r: FieldReader, c: Record<string, Json>): Pick<ContainerModel, 'stdin' | 'stdinOnce' | 'tty'> {
  return {stdin: r.boolean(c.stdin, 'stdin'), stdinOnce: r.boolean(c.stdin_once, 'stdin_once'), tty: r.boolean(c.tty, 'tty')}
}

/** A container's metadata.attempt, and namespace_options only when given (without them the container follows the pod). */
function crictlOwn(
  r: FieldReader,
  attempt: number | undefined,
  namespaces: Json | undefined,
): Pick<ContainerModel, 'attempt' | 'namespaceOptions'> {
  const path = 'linux.security_context.namespace_options'
  return {
    ...(attempt ? {attempt} : {}),
    ...(namespaces === undefined || namespaces === null ? {} : {namespaceOptions: readNamespaceOptions(r, namespaces, path)}),
  }
}

/** Absent modes are POD: Go's zero value, which is what crictl sends for them. */
function readNamespaceOptions(r: FieldReader, value: Json | undefined, path: string): NamespaceOptionsModel {
  const options = r.object(value, path, NAMESPACE_OPTIONS_RULE)
  const mode = (key: 'network' | 'pid' | 'ipc') => readEnum(r, options[key], `${path}.${key}`, NAMESPACE_MODES) ?? 'POD'
  const targetId = r.string(options.target_id, `${path}.target_id`) || undefined
  return {network: mode('network'), pid: mode('pid'), ipc: mode('ipc'), ...(targetId ? {targetId} : {})}
}

/** Whether hostNetwork/hostPID/hostIPC/shareProcessNamespace say exactly these modes (podNamespaceOptions gives them back). */
function modelExpresses(options: NamespaceOptionsModel): boolean {
  const podOrNode = (mode: string) => mode === 'POD' || mode === 'NODE'
  return podOrNode(options.network) && podOrNode(options.ipc) && options.pid !== 'TARGET' && options.targetId === undefined
}

function readEnum<T extends string>(r: FieldReader, value: Json | undefined, path: string, names: readonly T[]): T | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < names.length) return names[value]
  if (typeof value === 'string' && (names as readonly string[]).includes(value)) return value as T
  return r.fail(path, `must be one of ${names.map((n, i) => `${n} (${i})`).join(', ')}, not ${describe(value)}`)
}

function problem(r: FieldReader, path: string, value: string, reason: string | undefined): void {
  if (reason) r.fail(path, `"${value}" is invalid: ${reason}`)
}

function keyProblem(r: FieldReader, path: string, key: string): void {
  const reason = qualifiedName(key)
  if (reason) r.fail(path, `key is invalid: ${reason}`)
}
