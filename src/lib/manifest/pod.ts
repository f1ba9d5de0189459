/**
 * Reads one Kubernetes v1 Pod (already decoded from YAML/JSON) into podctl's model: checks every
 * field, validates names the way the API server does, and applies the API server's defaults
 * (namespace "default", restartPolicy Always, a generated uid, terminationMessagePath, ...).
 * Anything podctl would not honour is refused with the field's path.
 */
import {randomUUID} from 'node:crypto'

import {DEFAULT_NAMESPACE} from '../kube/helpers.js'
import {PULL_POLICIES} from '../kube/labels.js'
import {FieldReader, type Json} from './fields.js'
import {checkAnnotationSize, checkResourceTotals} from './limits.js'
import {
  CAPABILITIES_RULE,
  CONTAINER_RULE,
  DEFAULT_TERMINATION_MESSAGE_PATH,
  DNS_CONFIG_RULE,
  DNS_OPTION_RULE,
  DNS_POLICIES,
  EMPTY_DIR_RULE,
  ENV_RULE,
  HOST_PATH_RULE,
  HOST_PATH_TYPES,
  INT64_MAX,
  METADATA_RULE,
  POD_RULE,
  PORT_RULE,
  PROTOCOLS,
  RESOURCE_LIST_RULE,
  RESOURCES_RULE,
  RESTART_POLICIES,
  SECURITY_CONTEXT_RULE,
  SPEC_RULE,
  VOLUME_MOUNT_RULE,
  VOLUME_RULE,
} from './pod-fields.js'
import type {
  ContainerModel,
  ContainerPortModel,
  DnsPolicy,
  HostPathType,
  PodModel,
  PortProtocol,
  PullPolicy,
  ResourceListModel,
  RestartPolicy,
  SecurityContextModel,
  VolumeModel,
} from './model.js'
import {dns1123Label, dns1123Subdomain, envVarName, ipAddress, labelValue, portName, qualifiedName} from './names.js'
import {readLifecycle, readProbe} from './probes.js'
import {compareQuantities, isNegative, parseQuantity, quantityMilliValue, quantityValue} from './quantity.js'

export interface ParsePodOptions {
  /** Makes uids (tests pass a fixed one). */
  newUid?: () => string
}

export function parsePod(document: Json, source: string, options: ParsePodOptions = {}): PodModel {
  const r: FieldReader = new FieldReader(source)
  const root = r.object(document, '', POD_RULE)
  if (Object.keys(root).length === 0) r.fail('document', 'is empty; expected a v1 Pod')
  const kind = r.string(root.kind, 'kind', {required: true})
  if (kind !== 'Pod') {
    const hint = ['CronJob', 'DaemonSet', 'Deployment', 'Job', 'ReplicaSet', 'StatefulSet'].includes(kind ?? '')
      ? '; podctl runs Pods (copy spec.template into a Pod)'
      : '; podctl runs Pods'
    r.fail('kind', `"${kind}" is not supported${hint}`)
  }

  const apiVersion = r.string(root.apiVersion, 'apiVersion', {required: true})
  if (apiVersion !== 'v1') r.fail('apiVersion', `must be "v1" for a Pod, not "${apiVersion}"`)

  const metadata = r.object(root.metadata, 'metadata', METADATA_RULE)
  const name = r.requiredString(metadata.name, 'metadata.name')
  check(r, 'metadata.name', name, dns1123Subdomain(name))
  const namespace = r.string(metadata.namespace, 'metadata.namespace') || DEFAULT_NAMESPACE
  check(r, 'metadata.namespace', namespace, dns1123Label(namespace))
  const givenUid = r.string(metadata.uid, 'metadata.uid')
  if (givenUid !== undefined && givenUid !== '') check(r, 'metadata.uid', givenUid, labelValue(givenUid))
  const labels = r.stringMap(metadata.labels, 'metadata.labels', (key, value, path) => {
    checkKey(r, path, key)
    check(r, path, value, labelValue(value))
  })
  const annotations = r.stringMap(metadata.annotations, 'metadata.annotations', (key, _value, path) => checkKey(r, path, key))
  checkAnnotationSize(r, 'metadata.annotations', annotations)

  if (root.spec === undefined || root.spec === null) r.fail('spec', 'is required')
  const spec = r.object(root.spec, 'spec', SPEC_RULE)
  const volumes = r.list(spec.volumes, 'spec.volumes').map((item, index) => readVolume(r, item, `spec.volumes[${index}]`))
  const volumeNames = new Set<string>()
  for (const [index, volume] of volumes.entries()) {
    if (volumeNames.has(volume.name)) r.fail(`spec.volumes[${index}].name`, `"${volume.name}" is a duplicate volume name`)
    volumeNames.add(volume.name)
  }

  const hostNetwork = r.boolean(spec.hostNetwork, 'spec.hostNetwork') ?? false
  const terminationGracePeriodSeconds = r.integer(spec.terminationGracePeriodSeconds, 'spec.terminationGracePeriodSeconds', {min: 0})
  const context = {volumeNames, hostNetwork, gracePeriodSeconds: terminationGracePeriodSeconds}
  const readContainers = (key: 'containers' | 'initContainers') =>
    r.list(spec[key], `spec.${key}`).map((item, index) => readContainer(r, item, `spec.${key}[${index}]`, context))
  const initContainers = readContainers('initContainers')
  const containers = readContainers('containers')
  if (containers.length === 0) r.fail('spec.containers', 'must list at least one container')
  const containerNames = new Set<string>()
  for (const [key, list] of [
    ['initContainers', initContainers],
    ['containers', containers],
  ] as const) {
    for (const [index, container] of list.entries()) {
      if (containerNames.has(container.name)) r.fail(`spec.${key}[${index}].name`, `"${container.name}" is a duplicate container name`)
      containerNames.add(container.name)
    }
  }

  checkHostPorts(r, containers)
  checkResourceTotals(r, [...initContainers, ...containers], 'spec.containers')

  const restartPolicy = r.oneOf<RestartPolicy>(spec.restartPolicy, 'spec.restartPolicy', RESTART_POLICIES) ?? 'Always'
  const hostname = r.string(spec.hostname, 'spec.hostname') || undefined
  if (hostname !== undefined) check(r, 'spec.hostname', hostname, dns1123Label(hostname))
  const dnsPolicy = r.oneOf<DnsPolicy>(spec.dnsPolicy, 'spec.dnsPolicy', DNS_POLICIES) ?? 'ClusterFirst'
  const dnsConfig = spec.dnsConfig === undefined || spec.dnsConfig === null ? undefined : readDnsConfig(r, spec.dnsConfig)
  if (dnsPolicy === 'None' && !dnsConfig) r.fail('spec.dnsConfig', 'is required when dnsPolicy is None')
  if (dnsPolicy === 'None' && dnsConfig && dnsConfig.nameservers.length === 0) {
    r.fail('spec.dnsConfig.nameservers', 'must list at least one nameserver when dnsPolicy is None')
  }

  const runtimeClassName = r.string(spec.runtimeClassName, 'spec.runtimeClassName') || undefined
  if (runtimeClassName !== undefined) check(r, 'spec.runtimeClassName', runtimeClassName, dns1123Subdomain(runtimeClassName))
  const hostPID = r.boolean(spec.hostPID, 'spec.hostPID') ?? false
  const shareProcessNamespace = r.boolean(spec.shareProcessNamespace, 'spec.shareProcessNamespace') ?? false
  if (hostPID && shareProcessNamespace) r.fail('spec.shareProcessNamespace', 'may not be true when hostPID is true')

  return {
    source,
    name,
    namespace,
    uid: givenUid || (options.newUid ?? randomUUID)(),
    uidGenerated: !givenUid,
    labels,
    annotations,
    restartPolicy,
    terminationGracePeriodSeconds,
    hostNetwork,
    hostPID,
    hostIPC: r.boolean(spec.hostIPC, 'spec.hostIPC') ?? false,
    shareProcessNamespace,
    hostname,
    dnsPolicy,
    dnsConfig,
    runtimeClassName,
    volumes,
    initContainers,
    containers,
  }
}

function check(r: FieldReader, path: string, value: string, problem: string | undefined): void {
  if (problem) r.fail(path, `"${value}" is invalid: ${problem}`)
}

function checkKey(r: FieldReader, path: string, key: string): void {
  const problem = qualifiedName(key)
  if (problem) r.fail(path, `key is invalid: ${problem}`)
}

function readVolume(r: FieldReader, item: Json, path: string): VolumeModel {
  const volume = r.object(item, path, VOLUME_RULE)
  const name = r.requiredString(volume.name, `${path}.name`)
  check(r, `${path}.name`, name, dns1123Label(name))
  const hasHostPath = volume.hostPath !== undefined && volume.hostPath !== null
  const hasEmptyDir = volume.emptyDir !== undefined
  if (hasHostPath && hasEmptyDir) r.fail(path, 'may not specify more than one volume type (hostPath and emptyDir)')
  if (hasHostPath) {
    const hostPath = r.object(volume.hostPath, `${path}.hostPath`, HOST_PATH_RULE)
    const hostPathPath = r.requiredString(hostPath.path, `${path}.hostPath.path`)
    if (!hostPathPath.startsWith('/')) r.fail(`${path}.hostPath.path`, `"${hostPathPath}" must be an absolute path`)
    if (hostPathPath.split('/').includes('..')) r.fail(`${path}.hostPath.path`, `"${hostPathPath}" must not contain '..'`)
    const type = r.oneOf<HostPathType>(hostPath.type, `${path}.hostPath.type`, HOST_PATH_TYPES) ?? ''
    return {name, hostPath: {path: hostPathPath, type}}
  }

  if (hasEmptyDir) {
    const emptyDir = r.object(volume.emptyDir, `${path}.emptyDir`, EMPTY_DIR_RULE)
    const medium = r.string(emptyDir.medium, `${path}.emptyDir.medium`)
    if (medium) r.fail(`${path}.emptyDir.medium`, `"${medium}" is not supported by podctl; use the default (disk) medium`)
    return {name, emptyDir: {}}
  }

  return r.fail(path, 'must specify a volume type: hostPath or emptyDir')
}

interface ContainerContext {
  volumeNames: Set<string>
  hostNetwork: boolean
  gracePeriodSeconds?: number
}

function readContainer(r: FieldReader, item: Json, path: string, context: ContainerContext): ContainerModel {
  const c = r.object(item, path, CONTAINER_RULE)
  const name = r.requiredString(c.name, `${path}.name`)
  check(r, `${path}.name`, name, dns1123Label(name))
  const image = r.requiredString(c.image, `${path}.image`)
  if (image !== image.trim()) r.fail(`${path}.image`, 'must not have leading or trailing whitespace')

  const env = r.list(c.env, `${path}.env`).map((entry, index) => {
    const where = `${path}.env[${index}]`
    const variable = r.object(entry, where, ENV_RULE)
    const envName = r.requiredString(variable.name, `${where}.name`)
    check(r, `${where}.name`, envName, envVarName(envName))
    return {name: envName, value: r.string(variable.value, `${where}.value`) ?? ''}
  })

  const ports = r.list(c.ports, `${path}.ports`).map((entry, index) => readPort(r, entry, `${path}.ports[${index}]`, context))
  const portNames = new Set<string>()
  for (const [index, port] of ports.entries()) {
    if (port.name === undefined) continue
    if (portNames.has(port.name)) r.fail(`${path}.ports[${index}].name`, `"${port.name}" is a duplicate port name`)
    portNames.add(port.name)
  }

  const mountPaths = new Set<string>()
  const volumeMounts = r.list(c.volumeMounts, `${path}.volumeMounts`).map((entry, index) => {
    const where = `${path}.volumeMounts[${index}]`
    const mount = r.object(entry, where, VOLUME_MOUNT_RULE)
    const volume = r.requiredString(mount.name, `${where}.name`)
    if (!context.volumeNames.has(volume)) r.fail(`${where}.name`, `"${volume}" is not a volume of this pod; declare it under spec.volumes`)
    const mountPath = r.requiredString(mount.mountPath, `${where}.mountPath`)
    if (!mountPath.startsWith('/')) r.fail(`${where}.mountPath`, `"${mountPath}" must be an absolute path`)
    if (mountPaths.has(mountPath)) r.fail(`${where}.mountPath`, `"${mountPath}" must be unique`)
    mountPaths.add(mountPath)
    return {name: volume, mountPath, readOnly: r.boolean(mount.readOnly, `${where}.readOnly`) ?? false}
  })

  const terminationMessagePath = r.string(c.terminationMessagePath, `${path}.terminationMessagePath`) || DEFAULT_TERMINATION_MESSAGE_PATH
  if (!terminationMessagePath.startsWith('/')) r.fail(`${path}.terminationMessagePath`, 'must be an absolute path')

  return {
    name,
    image,
    imagePullPolicy: r.oneOf<PullPolicy>(c.imagePullPolicy, `${path}.imagePullPolicy`, PULL_POLICIES),
    command: r.strings(c.command, `${path}.command`),
    args: r.strings(c.args, `${path}.args`),
    workingDir: r.string(c.workingDir, `${path}.workingDir`) || undefined,
    env,
    ports,
    resources: readResources(r, c.resources, `${path}.resources`),
    securityContext: readSecurityContext(r, c.securityContext, `${path}.securityContext`),
    lifecycle: readLifecycle(r, c.lifecycle, `${path}.lifecycle`, {ports, gracePeriodSeconds: context.gracePeriodSeconds}),
    livenessProbe: readProbe(r, c.livenessProbe, `${path}.livenessProbe`, 'livenessProbe', {ports}),
    readinessProbe: readProbe(r, c.readinessProbe, `${path}.readinessProbe`, 'readinessProbe', {ports}),
    startupProbe: readProbe(r, c.startupProbe, `${path}.startupProbe`, 'startupProbe', {ports}),
    volumeMounts,
    terminationMessagePath,
    terminationMessagePolicy:
      r.oneOf(c.terminationMessagePolicy, `${path}.terminationMessagePolicy`, ['File', 'FallbackToLogsOnError'] as const) ?? 'File',
  }
}

function readPort(r: FieldReader, entry: Json, where: string, context: ContainerContext): ContainerPortModel {
  const port = r.object(entry, where, PORT_RULE)
  const containerPort = r.integer(port.containerPort, `${where}.containerPort`, {min: 1, max: 65_535})
  if (containerPort === undefined) r.fail(`${where}.containerPort`, 'is required')
  let hostPort = r.integer(port.hostPort, `${where}.hostPort`, {min: 0, max: 65_535}) || undefined
  // The API server defaults hostPort to containerPort for host-network pods, and requires them to match.
  if (context.hostNetwork) {
    hostPort ??= containerPort
    if (hostPort !== containerPort) r.fail(`${where}.hostPort`, `must match containerPort (${containerPort}) when hostNetwork is true`)
  }

  const name = r.string(port.name, `${where}.name`) || undefined
  if (name !== undefined) check(r, `${where}.name`, name, portName(name))
  const hostIP = r.string(port.hostIP, `${where}.hostIP`) || undefined
  if (hostIP !== undefined) check(r, `${where}.hostIP`, hostIP, ipAddress(hostIP))
  return {
    name,
    containerPort,
    hostPort,
    protocol: r.oneOf<PortProtocol>(port.protocol, `${where}.protocol`, PROTOCOLS) ?? 'TCP',
    hostIP,
  }
}

/** Two ports of the pod may not claim the same host port, protocol and address. */
function checkHostPorts(r: FieldReader, containers: ContainerModel[]): void {
  const seen = new Set<string>()
  for (const [ci, container] of containers.entries()) {
    for (const [pi, port] of container.ports.entries()) {
      if (!port.hostPort) continue
      const key = `${port.hostIP ?? '0.0.0.0'}/${port.protocol}/${port.hostPort}`
      if (seen.has(key))
        r.fail(
          `spec.containers[${ci}].ports[${pi}].hostPort`,
          `${port.hostPort}/${port.protocol} is already used by another port of this pod`,
        )
      seen.add(key)
    }
  }
}

function readResourceList(r: FieldReader, value: Json | undefined, path: string): ResourceListModel {
  const list = r.object(value, path, RESOURCE_LIST_RULE)
  const out: ResourceListModel = {}
  for (const key of ['cpu', 'memory'] as const) {
    const raw = list[key]
    if (raw === undefined || raw === null) continue
    if (typeof raw !== 'string' && typeof raw !== 'number') r.fail(`${path}.${key}`, 'must be a quantity such as 500m, 1, 128Mi or 1G')
    const quantity = parseQuantity(raw)
    if (!quantity) r.fail(`${path}.${key}`, `"${raw}" is not a quantity; use e.g. ${key === 'cpu' ? '500m or 2' : '128Mi or 1G'}`)
    if (isNegative(quantity)) r.fail(`${path}.${key}`, 'must be greater than or equal to 0')
    const [value, max, unit] =
      key === 'memory' ? [quantityValue(quantity), INT64_MAX, ' bytes (8Ei)'] : [quantityMilliValue(quantity), INT64_MAX / 1024n, 'm']
    if (value > max) r.fail(`${path}.${key}`, `"${quantity.text}" is more than the runtime can set; use at most ${max}${unit}`)
    out[key] = quantity.text
  }

  return out
}

function readResources(r: FieldReader, value: Json | undefined, path: string): ContainerModel['resources'] {
  const resources = r.object(value, path, RESOURCES_RULE)
  const limits = readResourceList(r, resources.limits, `${path}.limits`)
  const requests = readResourceList(r, resources.requests, `${path}.requests`)
  for (const key of ['cpu', 'memory'] as const) {
    const request = requests[key]
    const limit = limits[key]
    if (request !== undefined && limit !== undefined && compareQuantities(parseQuantity(request)!, parseQuantity(limit)!) > 0) {
      r.fail(`${path}.requests.${key}`, `must be less than or equal to the ${key} limit (${limit})`)
    }
  }

  return {limits, requests}
}

function readSecurityContext(r: FieldReader, value: Json | undefined, path: string): SecurityContextModel | undefined {
  if (value === undefined || value === null) return undefined
  const sc = r.object(value, path, SECURITY_CONTEXT_RULE)
  const id = {min: 0, max: 2_147_483_647}
  let capabilities: SecurityContextModel['capabilities']
  if (sc.capabilities !== undefined && sc.capabilities !== null) {
    const caps = r.object(sc.capabilities, `${path}.capabilities`, CAPABILITIES_RULE)
    capabilities = {add: r.strings(caps.add, `${path}.capabilities.add`), drop: r.strings(caps.drop, `${path}.capabilities.drop`)}
  }

  const out: SecurityContextModel = {
    runAsUser: r.integer(sc.runAsUser, `${path}.runAsUser`, id),
    runAsGroup: r.integer(sc.runAsGroup, `${path}.runAsGroup`, id),
    runAsNonRoot: r.boolean(sc.runAsNonRoot, `${path}.runAsNonRoot`),
    privileged: r.boolean(sc.privileged, `${path}.privileged`),
    readOnlyRootFilesystem: r.boolean(sc.readOnlyRootFilesystem, `${path}.readOnlyRootFilesystem`),
    allowPrivilegeEscalation: r.boolean(sc.allowPrivilegeEscalation, `${path}.allowPrivilegeEscalation`),
    capabilities,
  }
  if (out.privileged && out.allowPrivilegeEscalation === false) {
    r.fail(`${path}.allowPrivilegeEscalation`, 'cannot be false when privileged is true')
  }

  if (out.runAsNonRoot && out.runAsUser === 0) r.fail(`${path}.runAsUser`, 'is 0 (root), which breaks runAsNonRoot')
  return out
}

function readDnsConfig(r: FieldReader, value: Json): NonNullable<PodModel['dnsConfig']> {
  const dns = r.object(value, 'spec.dnsConfig', DNS_CONFIG_RULE)
  const nameservers = r.strings(dns.nameservers, 'spec.dnsConfig.nameservers')
  if (nameservers.length > 3) r.fail('spec.dnsConfig.nameservers', `must not have more than 3 nameservers, not ${nameservers.length}`)
  for (const [index, server] of nameservers.entries()) check(r, `spec.dnsConfig.nameservers[${index}]`, server, ipAddress(server))
  const searches = r.strings(dns.searches, 'spec.dnsConfig.searches')
  if (searches.length > 32) r.fail('spec.dnsConfig.searches', `must not have more than 32 search paths, not ${searches.length}`)
  for (const [index, search] of searches.entries()) {
    const domain = search.endsWith('.') ? search.slice(0, -1) : search
    check(r, `spec.dnsConfig.searches[${index}]`, search, dns1123Subdomain(domain.toLowerCase()))
  }

  const options = r.list(dns.options, 'spec.dnsConfig.options').map((entry, index) => {
    const where = `spec.dnsConfig.options[${index}]`
    const option = r.object(entry, where, DNS_OPTION_RULE)
    const optionName = r.requiredString(option.name, `${where}.name`)
    const optionValue = r.string(option.value, `${where}.value`)
    return optionValue === undefined ? {name: optionName} : {name: optionName, value: optionValue}
  })
  return {nameservers, searches, options}
}
