/**
 * Parts of a v1 PodSpec read beside the containers (pod.ts): resources (container, pod-level and
 * overhead), hostAliases, the hostname fields, os, hostUsers, activeDeadlineSeconds and the pod
 * securityContext, with the API server's validation and defaults.
 */
import {type FieldReader, INT64, type Json, type JsonObject} from './fields.js'
import type {ContainerModel, PodModel, ResourceListModel} from './model.js'
import {dns1123Label, dns1123Subdomain, ipAddress} from './names.js'
import {HOST_ALIAS_RULE, INT64_MAX, OS_RULE, POD_RESOURCES_RULE, RESOURCE_LIST_RULE, RESOURCES_RULE} from './pod-fields.js'
import {compareQuantities, isNegative, parseQuantity, quantityMilliValue, quantityValue} from './quantity.js'
import {checkSysctlNamespaces, readPodSecurityContext} from './security-context.js'

/** The cluster domain podctl uses for subdomain FQDNs: there is no cluster, so the one every kubeadm and kind cluster has. */
export const CLUSTER_DOMAIN = 'cluster.local'
/** The kubelet's hostname limit (truncatePodHostnameIfNeeded) and the kernel's limit for an FQDN hostname. */
const HOSTNAME_MAX_LENGTH = 63
const FQDN_MAX_LENGTH = 64

/**
 * The kubelet's GeneratePodHostNameAndDomain: hostnameOverride as is, else spec.hostname or the pod
 * name cut to 63 characters (without a trailing '-' or '.'); the domain is
 * <subdomain>.<namespace>.svc.cluster.local when spec.subdomain is set.
 */
export function podHostnameAndDomain(pod: Pick<PodModel, 'name' | 'namespace' | 'hostname' | 'subdomain' | 'hostnameOverride'>): {
  hostname: string
  domain: string
} {
  if (pod.hostnameOverride) return {hostname: pod.hostnameOverride, domain: ''}
  let hostname = pod.hostname ?? pod.name
  if (hostname.length > HOSTNAME_MAX_LENGTH) hostname = hostname.slice(0, HOSTNAME_MAX_LENGTH).replace(/[-.]+$/, '')
  return {hostname, domain: pod.subdomain ? `${pod.subdomain}.${pod.namespace}.svc.${CLUSTER_DOMAIN}` : ''}
}

/** GetNodenameForKernel: the FQDN when setHostnameAsFQDN and a domain, else the hostname. */
export function kernelHostname(pod: Parameters<typeof podHostnameAndDomain>[0] & Pick<PodModel, 'setHostnameAsFQDN'>): string {
  const {hostname, domain} = podHostnameAndDomain(pod)
  return pod.setHostnameAsFQDN && domain ? `${hostname}.${domain}` : hostname
}

/** The kubelet refuses an FQDN hostname longer than the kernel takes; found here, before anything is created. */
export function checkFqdnLength(r: FieldReader, pod: Parameters<typeof kernelHostname>[0]): void {
  const name = kernelHostname(pod)
  if (pod.setHostnameAsFQDN && name.length > FQDN_MAX_LENGTH) {
    r.fail(
      'spec.setHostnameAsFQDN',
      `FQDN ${name} is too long (${FQDN_MAX_LENGTH} characters is the max, ${name.length} characters requested); ` +
        'shorten hostname or subdomain',
    )
  }
}

export function check(r: FieldReader, path: string, value: string, problem: string | undefined): void {
  if (problem) r.fail(path, `"${value}" is invalid: ${problem}`)
}

/** `limits[nvidia.com/gpu]`: kubectl's way of naming a key with dots or slashes. */
function keyPath(path: string, key: string): string {
  return /[./]/.test(key) ? `${path}[${key}]` : `${path}.${key}`
}

export function readResourceList(r: FieldReader, value: Json | undefined, path: string): ResourceListModel {
  let rest = value
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const copy: JsonObject = {...value}
    for (const key of Object.keys(copy)) {
      if (!key.includes('/')) continue
      r.refuse(keyPath(path, key), 'is an extended resource: it needs a device plugin, which podctl does not run')
      delete copy[key]
    }

    rest = copy
  }

  const list = r.object(rest, path, RESOURCE_LIST_RULE)
  const out: ResourceListModel = {}
  for (const key of ['cpu', 'memory'] as const) {
    const raw = list[key]
    if (raw === undefined || raw === null) continue
    if (typeof raw !== 'string' && typeof raw !== 'number') r.fail(`${path}.${key}`, 'must be a quantity such as 500m, 1, 128Mi or 1G')
    const quantity = parseQuantity(raw)
    if (!quantity) r.fail(`${path}.${key}`, `"${raw}" is not a quantity; use e.g. ${key === 'cpu' ? '500m or 2' : '128Mi or 1G'}`)
    if (isNegative(quantity)) r.fail(`${path}.${key}`, 'must be greater than or equal to 0')
    const [amount, max, unit] =
      key === 'memory' ? [quantityValue(quantity), INT64_MAX, ' bytes (8Ei)'] : [quantityMilliValue(quantity), INT64_MAX / 1024n, 'm']
    if (amount > max) r.fail(`${path}.${key}`, `"${quantity.text}" is more than the runtime can set; use at most ${max}${unit}`)
    out[key] = quantity.text
  }

  return out
}

/** Requests above limits are refused; a missing request is left to the readers (it defaults to the limit). */
export function readResources(
  r: FieldReader,
  value: Json | undefined,
  path: string,
  rule: typeof RESOURCES_RULE | typeof POD_RESOURCES_RULE = RESOURCES_RULE,
): ContainerModel['resources'] {
  const resources = r.object(value, path, rule)
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

function readHostAliases(r: FieldReader, value: Json | undefined, hostNetwork: boolean): PodModel['hostAliases'] {
  const aliases = r.list(value, 'spec.hostAliases').map((entry, index) => {
    const where = `spec.hostAliases[${index}]`
    const alias = r.object(entry, where, HOST_ALIAS_RULE)
    const ip = r.requiredString(alias.ip, `${where}.ip`)
    check(r, `${where}.ip`, ip, ipAddress(ip))
    const hostnames = r.strings(alias.hostnames, `${where}.hostnames`)
    for (const [i, name] of hostnames.entries()) check(r, `${where}.hostnames[${i}]`, name, dns1123Subdomain(name))
    return {ip, hostnames}
  })
  if (aliases.length > 0 && hostNetwork) r.warn('spec.hostAliases', "a host-network pod keeps the node's /etc/hosts here")
  return aliases.length > 0 ? aliases : undefined
}

type SpecExtras = Pick<
  PodModel,
  | 'subdomain'
  | 'setHostnameAsFQDN'
  | 'hostnameOverride'
  | 'hostAliases'
  | 'securityContext'
  | 'resources'
  | 'overhead'
  | 'os'
  | 'hostUsers'
  | 'activeDeadlineSeconds'
>

/** The spec fields beside containers, volumes, DNS and namespaces; `hostNetwork`/`hostPID`/`hostIPC` as already read. */
export function readSpecExtras(
  r: FieldReader,
  spec: JsonObject,
  host: {hostNetwork: boolean; hostPID: boolean; hostIPC: boolean},
): SpecExtras {
  const subdomain = r.string(spec.subdomain, 'spec.subdomain') || undefined
  if (subdomain !== undefined) check(r, 'spec.subdomain', subdomain, dns1123Label(subdomain))
  const hostnameOverride = r.string(spec.hostnameOverride, 'spec.hostnameOverride') || undefined
  if (hostnameOverride !== undefined) check(r, 'spec.hostnameOverride', hostnameOverride, dns1123Subdomain(hostnameOverride))
  const securityContext = readPodSecurityContext(r, spec.securityContext, 'spec.securityContext')
  checkSysctlNamespaces(r, securityContext?.sysctls, host)

  let os: PodModel['os']
  if (spec.os !== undefined && spec.os !== null) {
    const name = r.requiredString(r.object(spec.os, 'spec.os', OS_RULE).name, 'spec.os.name')
    if (name === 'windows') r.refuse('spec.os.name', 'is windows: this node runs Linux containers')
    else if (name === 'linux') os = 'linux'
    else r.fail('spec.os.name', `must be linux or windows, not "${name}"`)
  }

  const hostUsers = r.boolean(spec.hostUsers, 'spec.hostUsers')
  if (hostUsers === false) {
    for (const key of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
      if (host[key]) r.fail('spec.hostUsers', `must be true when ${key} is true (a user namespace cannot share the node's)`)
    }
  }

  let resources: PodModel['resources']
  if (spec.resources !== undefined && spec.resources !== null) {
    resources = readResources(r, spec.resources, 'spec.resources', POD_RESOURCES_RULE)
    // The API server's default: a pod-level request not given is the pod-level limit.
    resources.requests = {...resources.limits, ...resources.requests}
  }

  const overhead = spec.overhead === undefined || spec.overhead === null ? undefined : readResourceList(r, spec.overhead, 'spec.overhead')
  return {
    subdomain,
    setHostnameAsFQDN: r.boolean(spec.setHostnameAsFQDN, 'spec.setHostnameAsFQDN') || undefined,
    hostnameOverride,
    hostAliases: readHostAliases(r, spec.hostAliases, host.hostNetwork),
    securityContext,
    resources,
    overhead,
    os,
    hostUsers,
    activeDeadlineSeconds: r.integer(spec.activeDeadlineSeconds, 'spec.activeDeadlineSeconds', {min: 1, max: INT64.max}),
  }
}
