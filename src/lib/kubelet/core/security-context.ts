/**
 * The kubelet's security context translation: securitycontext.DetermineEffectiveSecurityContext
 * (container fields over the pod's), kuberuntime security_context.go determineEffectiveSecurityContext
 * and convertToRuntimeSecurityContext, getSeccompProfile and getAppArmorProfile (helpers.go), and the
 * sandbox's LinuxSandboxSecurityContext and sysctls (kuberuntime_sandbox.go generatePodSandboxLinuxConfig).
 */
import type {ContainerModel, PodModel, SecurityContextModel, SecurityProfileModel, SELinuxOptionsModel} from '../../manifest/model.js'
import type {
  LinuxContainerSecurityContext,
  LinuxSandboxSecurityContext,
  SecurityProfile,
  SecurityProfile_ProfileType,
  SELinuxOption,
  SupplementalGroupsPolicy,
} from '../../../generated/runtime/v1/api.js'

/** The kubelet's default --seccomp-profile-root (<root-dir>/seccomp): Localhost profiles are relative to it. */
export const SECCOMP_PROFILE_ROOT = '/var/lib/kubelet/seccomp'

/** securitycontext defaults for the default proc mount (what the kubelet sends for every container). */
export const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
]
export const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger']

/** DetermineEffectiveSecurityContext: the pod's user, group, non-root, profiles and SELinux, then every container field over them. */
export function effectiveSecurityContext(pod: PodModel, container: ContainerModel): SecurityContextModel {
  const podSc = pod.securityContext
  const fromPod: SecurityContextModel = {}
  if (podSc) {
    for (const key of ['runAsUser', 'runAsGroup', 'runAsNonRoot', 'seccompProfile', 'appArmorProfile', 'seLinuxOptions'] as const) {
      if (podSc[key] !== undefined) Object.assign(fromPod, {[key]: podSc[key]})
    }
  }

  const own = container.securityContext ?? {}
  const merged: SecurityContextModel = {...fromPod}
  for (const [key, value] of Object.entries(own)) if (value !== undefined) Object.assign(merged, {[key]: value})
  return merged
}

function profile(type: SecurityProfileModel['type'], localhostRef?: string): SecurityProfile {
  return {profileType: type as SecurityProfile_ProfileType, ...(localhostRef === undefined ? {} : {localhostRef})} as SecurityProfile
}

/** getSeccompProfile without SeccompDefault: the container's field, else the pod's, else Unconfined. */
export function seccompProfile(pod: PodModel, container: ContainerModel): SecurityProfile {
  const field = container.securityContext?.seccompProfile ?? pod.securityContext?.seccompProfile
  if (!field) return profile('Unconfined')
  if (field.type === 'Localhost') return profile('Localhost', `${SECCOMP_PROFILE_ROOT}/${field.localhostProfile}`)
  return profile(field.type)
}

/** getAppArmorProfile: the profile and its deprecated string form (runtime/default, unconfined, localhost/NAME); none when unset. */
export function appArmorProfile(pod: PodModel, container: ContainerModel): {apparmor?: SecurityProfile; apparmorProfile: string} {
  const field = container.securityContext?.appArmorProfile ?? pod.securityContext?.appArmorProfile
  if (!field) return {apparmorProfile: ''}
  if (field.type === 'RuntimeDefault') return {apparmor: profile('RuntimeDefault'), apparmorProfile: 'runtime/default'}
  if (field.type === 'Unconfined') return {apparmor: profile('Unconfined'), apparmorProfile: 'unconfined'}
  return {apparmor: profile('Localhost', field.localhostProfile), apparmorProfile: `localhost/${field.localhostProfile}`}
}

function seLinuxOption(options: SELinuxOptionsModel | undefined): SELinuxOption | undefined {
  if (!options) return undefined
  return {user: options.user ?? '', role: options.role ?? '', type: options.type ?? '', level: options.level ?? ''}
}

/** fsGroup first, then supplementalGroups: the order both the sandbox and the containers get them in. */
export function podSupplementalGroups(pod: PodModel): string[] {
  const sc = pod.securityContext
  return [...(sc?.fsGroup === undefined ? [] : [sc.fsGroup]), ...(sc?.supplementalGroups ?? [])].map(String)
}

export type ContainerSecurityContext = Partial<Omit<LinuxContainerSecurityContext, 'namespaceOptions'>>

/**
 * determineEffectiveSecurityContext for one container: the merged fields, the image's user when
 * no runAsUser is set, the pod's fsGroup and supplemental groups, seccomp, AppArmor, and the
 * masked and read-only /proc paths (none for procMount Unmasked).
 */
export function containerSecurityContext(
  pod: PodModel,
  container: ContainerModel,
  imageUser: {uid?: number; username?: string} | undefined,
): ContainerSecurityContext {
  const sc = effectiveSecurityContext(pod, container)
  const unmasked = sc.procMount === 'Unmasked'
  const runAsUser = sc.runAsUser ?? imageUser?.uid
  const {apparmor, apparmorProfile} = appArmorProfile(pod, container)
  const groups = podSupplementalGroups(pod)
  const policy = pod.securityContext?.supplementalGroupsPolicy
  // Fields left at their zero value are left out, as the wire would carry them.
  return {
    ...(sc.capabilities ? {capabilities: {addCapabilities: sc.capabilities.add, dropCapabilities: sc.capabilities.drop}} : {}),
    privileged: sc.privileged ?? false,
    ...(sc.seLinuxOptions ? {selinuxOptions: seLinuxOption(sc.seLinuxOptions)} : {}),
    ...(runAsUser === undefined ? {} : {runAsUser: {value: String(runAsUser)}}),
    ...(sc.runAsGroup === undefined ? {} : {runAsGroup: {value: String(sc.runAsGroup)}}),
    runAsUsername: sc.runAsUser === undefined && imageUser?.uid === undefined ? (imageUser?.username ?? '') : '',
    readonlyRootfs: sc.readOnlyRootFilesystem ?? false,
    ...(groups.length > 0 ? {supplementalGroups: groups} : {}),
    ...(policy ? {supplementalGroupsPolicy: policy as SupplementalGroupsPolicy} : {}),
    noNewPrivs: sc.allowPrivilegeEscalation === false,
    maskedPaths: unmasked ? [] : DEFAULT_MASKED_PATHS,
    readonlyPaths: unmasked ? [] : DEFAULT_READONLY_PATHS,
    seccomp: seccompProfile(pod, container),
    ...(apparmor ? {apparmor, apparmorProfile} : {}),
  } as ContainerSecurityContext
}

/** The sandbox's security context (without namespaces and privileged, which sandbox.ts sets) and its sysctls. */
export function sandboxSecurityContext(pod: PodModel): {
  securityContext: Partial<LinuxSandboxSecurityContext>
  sysctls: Record<string, string>
} {
  const sc = pod.securityContext
  const sysctls = Object.fromEntries((sc?.sysctls ?? []).map(({name, value}) => [name, value]))
  if (!sc) return {securityContext: {}, sysctls}
  return {
    securityContext: {
      ...(sc.runAsUser === undefined ? {} : {runAsUser: {value: String(sc.runAsUser)}}),
      ...(sc.runAsGroup === undefined ? {} : {runAsGroup: {value: String(sc.runAsGroup)}}),
      ...(podSupplementalGroups(pod).length > 0 ? {supplementalGroups: podSupplementalGroups(pod)} : {}),
      ...(sc.supplementalGroupsPolicy ? {supplementalGroupsPolicy: sc.supplementalGroupsPolicy as SupplementalGroupsPolicy} : {}),
      ...(sc.seLinuxOptions ? {selinuxOptions: seLinuxOption(sc.seLinuxOptions)} : {}),
    },
    sysctls,
  }
}

/** The kubelet's verifyRunAsNonRoot over the effective context; undefined when allowed, else the reason (CreateContainerConfigError). */
export function verifyRunAsNonRoot(
  pod: PodModel,
  container: ContainerModel,
  imageUser: {uid?: number; username?: string} | undefined,
  podDescription: string,
): string | undefined {
  const sc = effectiveSecurityContext(pod, container)
  if (!sc.runAsNonRoot) return undefined
  const where = `(pod: "${podDescription}", container: ${container.name})`
  if (sc.runAsUser !== undefined) return sc.runAsUser === 0 ? `container's runAsUser breaks non-root policy ${where}` : undefined
  if (imageUser?.uid === 0) return `container has runAsNonRoot and image will run as root ${where}`
  if (imageUser?.uid === undefined && imageUser?.username) {
    return `container has runAsNonRoot and image has non-numeric user (${imageUser.username}), cannot verify user is non-root ${where}`
  }

  return undefined
}
