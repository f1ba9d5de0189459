/**
 * The pod's and the containers' securityContext (v1.PodSecurityContext, v1.SecurityContext) with
 * the API server's validation, and what it does to the deprecated annotations on create: the
 * AppArmor beta annotation becomes the container's appArmorProfile (and a field gets its
 * annotation, as pkg/api/pod applyAppArmorVersionSkew does); the seccomp alpha annotations, which
 * no kubelet reads since 1.27, are listed in the warning.
 */
import type {FieldReader, Json} from './fields.js'
import type {
  ContainerModel,
  IgnoredField,
  PodSecurityContextModel,
  ProfileType,
  SecurityContextModel,
  SecurityProfileModel,
  SELinuxOptionsModel,
} from './model.js'
import {
  CAPABILITIES_RULE,
  POD_SECURITY_CONTEXT_RULE,
  PROFILE_RULE,
  SE_LINUX_OPTIONS_RULE,
  SECURITY_CONTEXT_RULE,
  SYSCTL_RULE,
} from './pod-fields.js'

/** The API server's range for user and group IDs (validation.ValidateNonnegativeField + int32). */
const ID_RANGE = {min: 0, max: 2_147_483_647}
const PROFILE_TYPES = ['RuntimeDefault', 'Unconfined', 'Localhost'] as const
/** The kernel's sysctl names as the API server checks them (validation.IsValidSysctlName). */
const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/
const SYSCTL_NAME_MAX = 253

export const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/'
export const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod'
export const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/'

function readProfile(r: FieldReader, value: Json | undefined, path: string): SecurityProfileModel | undefined {
  if (value === undefined || value === null) return undefined
  const profile = r.object(value, path, PROFILE_RULE)
  const type = r.oneOf<ProfileType>(profile.type, `${path}.type`, PROFILE_TYPES)
  if (type === undefined) r.fail(`${path}.type`, 'is required (RuntimeDefault, Unconfined or Localhost)')
  const localhostProfile = r.string(profile.localhostProfile, `${path}.localhostProfile`)
  if (type === 'Localhost' && !localhostProfile) r.fail(`${path}.localhostProfile`, 'must be set when type is Localhost')
  if (type !== 'Localhost' && localhostProfile !== undefined) r.fail(`${path}.localhostProfile`, 'can only be set when type is Localhost')
  return type === 'Localhost' ? {type, localhostProfile} : {type}
}

function readSeLinuxOptions(r: FieldReader, value: Json | undefined, path: string): SELinuxOptionsModel | undefined {
  if (value === undefined || value === null) return undefined
  const options = r.object(value, path, SE_LINUX_OPTIONS_RULE)
  const out: SELinuxOptionsModel = {}
  for (const key of ['user', 'role', 'type', 'level'] as const) {
    const text = r.string(options[key], `${path}.${key}`)
    if (text) out[key] = text
  }

  return out
}

/** The shared part of both contexts: users, group, non-root, profiles, SELinux. */
function readCommon(r: FieldReader, sc: Record<string, Json>, path: string) {
  const runAsUser = r.integer(sc.runAsUser, `${path}.runAsUser`, ID_RANGE)
  const runAsNonRoot = r.boolean(sc.runAsNonRoot, `${path}.runAsNonRoot`)
  if (runAsNonRoot && runAsUser === 0) r.fail(`${path}.runAsUser`, 'is 0 (root), which breaks runAsNonRoot')
  return defined({
    runAsUser,
    runAsGroup: r.integer(sc.runAsGroup, `${path}.runAsGroup`, ID_RANGE),
    runAsNonRoot,
    seccompProfile: readProfile(r, sc.seccompProfile, `${path}.seccompProfile`),
    appArmorProfile: readProfile(r, sc.appArmorProfile, `${path}.appArmorProfile`),
    seLinuxOptions: readSeLinuxOptions(r, sc.seLinuxOptions, `${path}.seLinuxOptions`),
  })
}

/** A container's securityContext; undefined when absent. */
export function readSecurityContext(r: FieldReader, value: Json | undefined, path: string): SecurityContextModel | undefined {
  if (value === undefined || value === null) return undefined
  const sc = r.object(value, path, SECURITY_CONTEXT_RULE)
  let capabilities: SecurityContextModel['capabilities']
  if (sc.capabilities !== undefined && sc.capabilities !== null) {
    const caps = r.object(sc.capabilities, `${path}.capabilities`, CAPABILITIES_RULE)
    capabilities = {add: r.strings(caps.add, `${path}.capabilities.add`), drop: r.strings(caps.drop, `${path}.capabilities.drop`)}
  }

  const out: SecurityContextModel = defined({
    ...readCommon(r, sc, path),
    privileged: r.boolean(sc.privileged, `${path}.privileged`),
    readOnlyRootFilesystem: r.boolean(sc.readOnlyRootFilesystem, `${path}.readOnlyRootFilesystem`),
    allowPrivilegeEscalation: r.boolean(sc.allowPrivilegeEscalation, `${path}.allowPrivilegeEscalation`),
    capabilities,
    procMount: r.oneOf(sc.procMount, `${path}.procMount`, ['Default', 'Unmasked'] as const),
  })
  if (out.privileged && out.allowPrivilegeEscalation === false) {
    r.fail(`${path}.allowPrivilegeEscalation`, 'cannot be false when privileged is true')
  }

  if (out.capabilities?.add.includes('CAP_SYS_ADMIN') && out.allowPrivilegeEscalation === false) {
    r.fail(`${path}.allowPrivilegeEscalation`, 'cannot be false when capabilities.add has CAP_SYS_ADMIN')
  }

  return out
}

/** The pod's securityContext; `{}` stays `{}` (the API server's default). */
export function readPodSecurityContext(r: FieldReader, value: Json | undefined, path: string): PodSecurityContextModel | undefined {
  if (value === undefined || value === null) return undefined
  const sc = r.object(value, path, POD_SECURITY_CONTEXT_RULE)
  const supplementalGroups = r
    .list(sc.supplementalGroups, `${path}.supplementalGroups`)
    .map((group, index) => r.integer(group, `${path}.supplementalGroups[${index}]`, {min: 0, max: 2 ** 32 - 1}) ?? 0)
  const sysctls = r.list(sc.sysctls, `${path}.sysctls`).map((entry, index) => {
    const where = `${path}.sysctls[${index}]`
    const sysctl = r.object(entry, where, SYSCTL_RULE)
    const name = r.requiredString(sysctl.name, `${where}.name`)
    if (!validSysctlName(name)) {
      r.fail(`${where}.name`, `"${name}" is not a valid sysctl name (e.g. net.ipv4.ip_unprivileged_port_start)`)
    }

    return {name, value: r.string(sysctl.value, `${where}.value`) ?? ''}
  })
  const names = new Set<string>()
  for (const [index, {name}] of sysctls.entries()) {
    if (names.has(name)) r.fail(`${path}.sysctls[${index}].name`, `"${name}" is a duplicate sysctl`)
    names.add(name)
  }

  return defined({
    ...readCommon(r, sc, path),
    supplementalGroups: supplementalGroups.length > 0 ? supplementalGroups : undefined,
    supplementalGroupsPolicy: r.oneOf(sc.supplementalGroupsPolicy, `${path}.supplementalGroupsPolicy`, ['Merge', 'Strict'] as const),
    fsGroup: r.integer(sc.fsGroup, `${path}.fsGroup`, {min: 0, max: 2 ** 32 - 1}),
    fsGroupChangePolicy: r.oneOf(sc.fsGroupChangePolicy, `${path}.fsGroupChangePolicy`, ['OnRootMismatch', 'Always'] as const),
    sysctls: sysctls.length > 0 ? sysctls : undefined,
    seLinuxChangePolicy: r.oneOf(sc.seLinuxChangePolicy, `${path}.seLinuxChangePolicy`, ['MountOption', 'Recursive'] as const),
  })
}

/** A sysctl name as the API server validates it (dots or slashes between segments, at most 253 characters). */
export function validSysctlName(name: string): boolean {
  return name.length <= SYSCTL_NAME_MAX && SYSCTL_NAME.test(name)
}

/** Sysctls a host namespace shares with the node (the kubelet's sysctl admission refuses them then). */
export function checkSysctlNamespaces(
  r: FieldReader,
  sysctls: PodSecurityContextModel['sysctls'],
  pod: {hostNetwork: boolean; hostIPC: boolean},
): void {
  for (const [index, {name}] of (sysctls ?? []).entries()) {
    const where = `spec.securityContext.sysctls[${index}].name`
    const ipc = name.startsWith('kernel.shm') || name.startsWith('kernel.msg') || name === 'kernel.sem' || name.startsWith('fs.mqueue.')
    if (pod.hostNetwork && name.startsWith('net.')) r.refuse(where, `"${name}" is not allowed with hostNetwork: it would change the node`)
    if (pod.hostIPC && ipc) r.refuse(where, `"${name}" is not allowed with hostIPC: it would change the node`)
  }
}

function profileFromAnnotation(value: string): SecurityProfileModel | undefined {
  if (value === 'runtime/default') return {type: 'RuntimeDefault'}
  if (value === 'unconfined') return {type: 'Unconfined'}
  if (value.startsWith('localhost/') && value.length > 'localhost/'.length) {
    return {type: 'Localhost', localhostProfile: value.slice('localhost/'.length)}
  }

  return undefined
}

function annotationFromProfile(profile: SecurityProfileModel): string {
  if (profile.type === 'RuntimeDefault') return 'runtime/default'
  if (profile.type === 'Unconfined') return 'unconfined'
  return `localhost/${profile.localhostProfile}`
}

/**
 * The API server's AppArmor version skew on create: a container's beta annotation becomes its
 * appArmorProfile (unless it has one, or the pod's is the same), and a container with a profile
 * (its own or the pod's) gets the annotation. An invalid annotation value is refused.
 */
export function applyAppArmorAnnotations(
  r: FieldReader,
  annotations: Record<string, string>,
  podProfile: SecurityProfileModel | undefined,
  containers: ContainerModel[],
): void {
  const names = new Set(containers.map((container) => container.name))
  for (const [key, value] of Object.entries(annotations)) {
    if (!key.startsWith(APPARMOR_ANNOTATION_PREFIX)) continue
    const where = `metadata.annotations.${key}`
    if (!names.has(key.slice(APPARMOR_ANNOTATION_PREFIX.length))) r.fail(where, 'names a container that is not in the pod')
    if (!profileFromAnnotation(value)) r.fail(where, `"${value}" is invalid: use runtime/default, unconfined or localhost/<profile>`)
  }

  for (const container of containers) {
    const key = APPARMOR_ANNOTATION_PREFIX + container.name
    const own = container.securityContext?.appArmorProfile
    if (annotations[key] === undefined) {
      const profile = own ?? podProfile
      if (profile) annotations[key] = annotationFromProfile(profile)
      continue
    }

    const fromAnnotation = profileFromAnnotation(annotations[key])!
    const samePod = podProfile?.type === fromAnnotation.type && podProfile?.localhostProfile === fromAnnotation.localhostProfile
    if (!own && !samePod) container.securityContext = {...container.securityContext, appArmorProfile: fromAnnotation}
  }
}

/** The seccomp alpha annotations: accepted, ignored (as every kubelet since 1.27), and listed in the warning. */
export function seccompAnnotationWarnings(annotations: Record<string, string>): IgnoredField[] {
  return Object.keys(annotations)
    .filter((key) => key === SECCOMP_POD_ANNOTATION || key.startsWith(SECCOMP_CONTAINER_ANNOTATION_PREFIX))
    .map((key) => ({path: `metadata.annotations.${key}`, reason: 'removed in Kubernetes 1.27; use securityContext.seccompProfile'}))
}

function defined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key]
  return value
}
