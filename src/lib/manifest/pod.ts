/**
 * Reads one Kubernetes v1 Pod (already decoded from YAML/JSON) into podctl's model: checks every
 * field, validates names the way the API server does, and applies the API server's defaults
 * (namespace "default", restartPolicy Always, a generated uid, terminationMessagePath, ...).
 * Anything podctl would not honour is refused with the field's path.
 */
import {randomBytes, randomUUID} from 'node:crypto'

import {DEFAULT_NAMESPACE} from '../kube/helpers.js'
import {PULL_POLICIES} from '../kube/labels.js'
import {readEnv, readEnvFrom} from './env.js'
import {FieldReader, type Json} from './fields.js'
import {checkAnnotationSize, checkResourceTotals} from './limits.js'
import {
  CONTAINER_RULE,
  DEFAULT_TERMINATION_MESSAGE_PATH,
  DNS_CONFIG_RULE,
  DNS_OPTION_RULE,
  DNS_POLICIES,
  METADATA_RULE,
  POD_RULE,
  PORT_RULE,
  PROTOCOLS,
  RESIZE_POLICY_RULE,
  RESTART_POLICIES,
  SPEC_RULE,
} from './pod-fields.js'
import type {ContainerModel, ContainerPortModel, DnsPolicy, PodModel, PortProtocol, PullPolicy, RestartPolicy} from './model.js'
import {dns1123Label, dns1123Subdomain, ipAddress, labelValue, portName, qualifiedName} from './names.js'
import {check, checkFqdnLength, readResources, readSpecExtras} from './pod-spec.js'
import {applyAppArmorAnnotations, readSecurityContext, seccompAnnotationWarnings} from './security-context.js'
import {readPodReferences} from './pod-references.js'
import {readLifecycle, readProbe} from './probes.js'
import {readVolume, readVolumeMount} from './volumes.js'

export interface ParsePodOptions {
  /** Makes uids (tests pass a fixed one). */
  newUid?: () => string
  /** -n/--namespace: the namespace of a pod that names none; a different one in the manifest is refused, as kubectl does. */
  namespace?: string
}

export function parsePod(document: Json, source: string, options: ParsePodOptions = {}): PodModel {
  // Every refused field is collected and reported at once (r.finish() below); invalid values stop at once.
  const r: FieldReader = new FieldReader(source, {collect: true})
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
  const name = podName(r, metadata)
  check(r, 'metadata.name', name, dns1123Subdomain(name))
  const namespace = podNamespace(r, r.string(metadata.namespace, 'metadata.namespace'), options.namespace)
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
  const hostPID = r.boolean(spec.hostPID, 'spec.hostPID') ?? false
  const hostIPC = r.boolean(spec.hostIPC, 'spec.hostIPC') ?? false
  const extras = readSpecExtras(r, spec, {hostNetwork, hostPID, hostIPC})
  const terminationGracePeriodSeconds = r.integer(spec.terminationGracePeriodSeconds, 'spec.terminationGracePeriodSeconds', {min: 0})
  const emptyDirs = new Set(volumes.filter((volume) => volume.emptyDir).map((volume) => volume.name))
  const context = {volumeNames, emptyDirs, hostNetwork, gracePeriodSeconds: terminationGracePeriodSeconds}
  const readContainers = (key: 'containers' | 'initContainers') =>
    r
      .list(spec[key], `spec.${key}`)
      .map((item, index) => readContainer(r, item, `spec.${key}[${index}]`, {...context, init: key === 'initContainers'}))
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
  const shareProcessNamespace = r.boolean(spec.shareProcessNamespace, 'spec.shareProcessNamespace') ?? false
  if (hostPID && shareProcessNamespace) r.fail('spec.shareProcessNamespace', 'may not be true when hostPID is true')
  checkContainerSecurity(r, {initContainers, containers}, extras.hostUsers)
  checkFqdnLength(r, {name, namespace, hostname, ...extras})
  applyAppArmorAnnotations(r, annotations, extras.securityContext?.appArmorProfile, [...initContainers, ...containers])
  r.finish()
  const ignoredFields = [...r.warnings, ...seccompAnnotationWarnings(annotations)]

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
    hostIPC,
    shareProcessNamespace,
    hostname,
    ...extras,
    dnsPolicy,
    dnsConfig,
    runtimeClassName,
    volumes,
    initContainers,
    containers,
    ...(ignoredFields.length > 0 ? {ignoredFields} : {}),
    ...readPodReferences(r, spec),
    ...(r.dropped.length > 0 ? {droppedFields: [...r.dropped]} : {}),
  }
}

/** procMount Unmasked needs a user namespace (the API server's rule since 1.30). */
function checkContainerSecurity(r: FieldReader, lists: Record<string, ContainerModel[]>, hostUsers: boolean | undefined): void {
  for (const [key, list] of Object.entries(lists)) {
    for (const [index, container] of list.entries()) {
      if (container.securityContext?.procMount === 'Unmasked' && hostUsers !== false) {
        r.fail(`spec.${key}[${index}].securityContext.procMount`, 'Unmasked needs spec.hostUsers: false')
      }
    }
  }
}

function podNamespace(r: FieldReader, given: string | undefined, flag: string | undefined): string {
  if (given && flag !== undefined && given !== flag) {
    r.fail(
      'metadata.namespace',
      `"${given}" does not match the namespace "${flag}" of --namespace; pass --namespace ${given}, or leave it out`,
    )
  }

  return given || flag || DEFAULT_NAMESPACE
}

/** metadata.name, or generateName plus five random characters as the API server makes it. */
function podName(r: FieldReader, metadata: Record<string, Json>): string {
  const generateName = r.string(metadata.generateName, 'metadata.generateName')
  const given = r.string(metadata.name, 'metadata.name')
  if (given && generateName) r.warn('metadata.generateName', 'metadata.name is set')
  if (given || !generateName) return r.requiredString(given, 'metadata.name')
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789'
  return generateName + Array.from(randomBytes(5), (byte) => alphabet[byte % alphabet.length]).join('')
}

function checkKey(r: FieldReader, path: string, key: string): void {
  const problem = qualifiedName(key)
  if (problem) r.fail(path, `key is invalid: ${problem}`)
}

interface ContainerContext {
  volumeNames: Set<string>
  /** The emptyDir volumes, which env fileKeyRef reads. */
  emptyDirs: Set<string>
  hostNetwork: boolean
  gracePeriodSeconds?: number
  /** Read from spec.initContainers. */
  init?: boolean
}

/**
 * The API server's rules for restartPolicy on a container (validateInitContainers,
 * validateContainers): only Always, only on an init container (a sidecar); an init container that
 * runs to completion may not have lifecycle hooks or probes.
 */
function readContainerRestartPolicy(r: FieldReader, c: Record<string, Json>, path: string, init: boolean): 'Always' | undefined {
  if (c.restartPolicy !== undefined && c.restartPolicy !== null && !init) {
    r.fail(`${path}.restartPolicy`, 'may not be set for non-init containers; set the pod spec.restartPolicy instead')
  }

  const policy = r.oneOf(c.restartPolicy, `${path}.restartPolicy`, ['Always'] as const)
  if (init && policy === undefined) {
    for (const key of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
      if (c[key] !== undefined && c[key] !== null)
        r.fail(`${path}.${key}`, 'may not be set for init containers without restartPolicy=Always')
    }
  }

  return policy
}

function readContainer(r: FieldReader, item: Json, path: string, context: ContainerContext): ContainerModel {
  const c = r.object(item, path, CONTAINER_RULE)
  const name = r.requiredString(c.name, `${path}.name`)
  check(r, `${path}.name`, name, dns1123Label(name))
  const image = r.requiredString(c.image, `${path}.image`)
  if (image !== image.trim()) r.fail(`${path}.image`, 'must not have leading or trailing whitespace')

  const env = readEnv(r, c.env, `${path}.env`, context.emptyDirs)
  const envFrom = readEnvFrom(r, c.envFrom, `${path}.envFrom`)

  const ports = r.list(c.ports, `${path}.ports`).map((entry, index) => readPort(r, entry, `${path}.ports[${index}]`, context))
  const portNames = new Set<string>()
  for (const [index, port] of ports.entries()) {
    if (port.name === undefined) continue
    if (portNames.has(port.name)) r.fail(`${path}.ports[${index}].name`, `"${port.name}" is a duplicate port name`)
    portNames.add(port.name)
  }

  const mountPaths = new Set<string>()
  const privileged = (c.securityContext as {privileged?: Json} | null | undefined)?.privileged === true
  const volumeMounts = r
    .list(c.volumeMounts, `${path}.volumeMounts`)
    .map((entry, index) => readVolumeMount(r, entry, `${path}.volumeMounts[${index}]`, {...context, privileged}, mountPaths))

  const terminationMessagePath = r.string(c.terminationMessagePath, `${path}.terminationMessagePath`) || DEFAULT_TERMINATION_MESSAGE_PATH
  if (!terminationMessagePath.startsWith('/')) r.fail(`${path}.terminationMessagePath`, 'must be an absolute path')
  const restartPolicy = readContainerRestartPolicy(r, c, path, context.init ?? false)

  return {
    name,
    image,
    imagePullPolicy: r.oneOf<PullPolicy>(c.imagePullPolicy, `${path}.imagePullPolicy`, PULL_POLICIES),
    command: r.strings(c.command, `${path}.command`, {allowEmpty: true}),
    args: r.strings(c.args, `${path}.args`, {allowEmpty: true}),
    workingDir: r.string(c.workingDir, `${path}.workingDir`) || undefined,
    env,
    ...(envFrom.length > 0 ? {envFrom} : {}),
    ports,
    resources: readResources(r, c.resources, `${path}.resources`),
    ...readResizePolicy(r, c.resizePolicy, `${path}.resizePolicy`),
    securityContext: readSecurityContext(r, c.securityContext, `${path}.securityContext`),
    lifecycle: readLifecycle(r, c.lifecycle, `${path}.lifecycle`, {ports, gracePeriodSeconds: context.gracePeriodSeconds}),
    livenessProbe: readProbe(r, c.livenessProbe, `${path}.livenessProbe`, 'livenessProbe', {ports}),
    readinessProbe: readProbe(r, c.readinessProbe, `${path}.readinessProbe`, 'readinessProbe', {ports}),
    startupProbe: readProbe(r, c.startupProbe, `${path}.startupProbe`, 'startupProbe', {ports}),
    ...(restartPolicy ? {restartPolicy} : {}),
    volumeMounts,
    terminationMessagePath,
    terminationMessagePolicy:
      r.oneOf(c.terminationMessagePolicy, `${path}.terminationMessagePolicy`, ['File', 'FallbackToLogsOnError'] as const) ?? 'File',
    ...readStdio(r, c, path),
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

/** resizePolicy (validateResizePolicy): cpu and memory at most once each; absent when not given, so the container's hash stays. */
function readResizePolicy(r: FieldReader, value: Json | undefined, path: string): Pick<ContainerModel, 'resizePolicy'> {
  const policies = r.list(value, path).map((entry, index) => {
    const where = `${path}[${index}]`
    const policy = r.object(entry, where, RESIZE_POLICY_RULE)
    const resourceName = r.oneOf(policy.resourceName, `${where}.resourceName`, ['cpu', 'memory'] as const)
    if (resourceName === undefined) r.fail(`${where}.resourceName`, 'is required')
    const restartPolicy = r.oneOf(policy.restartPolicy, `${where}.restartPolicy`, ['NotRequired', 'RestartContainer'] as const)
    if (restartPolicy === undefined) r.fail(`${where}.restartPolicy`, 'is required')
    return {resourceName, restartPolicy}
  })
  const names = policies.map((policy) => policy.resourceName)
  const twice = names.find((name, index) => names.indexOf(name) !== index)
  if (twice) r.fail(path, `"${twice}" is given more than once`)
  return policies.length > 0 ? {resizePolicy: policies} : {}
}

/** stdin, stdinOnce, tty: passed to the runtime; stdinOnce needs stdin (the API server's rule). */
function readStdio(r: FieldReader, c: Record<string, Json>, path: string): Pick<ContainerModel, 'stdin' | 'stdinOnce' | 'tty'> {
  const stdin = r.boolean(c.stdin, `${path}.stdin`)
  const stdinOnce = r.boolean(c.stdinOnce, `${path}.stdinOnce`)
  const tty = r.boolean(c.tty, `${path}.tty`)
  if (stdinOnce && !stdin) r.fail(`${path}.stdinOnce`, 'needs stdin: true')
  return {...(stdin ? {stdin} : {}), ...(stdinOnce ? {stdinOnce} : {}), ...(tty ? {tty} : {})}
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
