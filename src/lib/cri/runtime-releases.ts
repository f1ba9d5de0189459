/**
 * Which runtime releases can do what a pod asks for, read from the runtimes' code, so a pod that
 * needs more is refused before anything is made, naming the runtime as it names itself in Version.
 * A runtime not named here (another CRI runtime) is let through: its own answer decides.
 */
import type {VersionResponse} from '../../generated/runtime/v1/api.js'

export type Release = [major: number, minor: number]

/** "1.26.4", "v2.4.2" or "1.6.20~ds1" → [major, minor]; undefined when it does not start with a version. */
export function majorMinor(version: string): Release | undefined {
  const match = /^v?(\d+)\.(\d+)/.exec(version)
  return match ? [Number(match[1]), Number(match[2])] : undefined
}

export function olderThan(release: Release, than: Release): boolean {
  return release[0] < than[0] || (release[0] === than[0] && release[1] < than[1])
}

/** "containerd 2.0.5" or "cri-o 1.30.2": the runtime as Version names it, without a leading "v". */
export function runtimeNamed(version: Pick<VersionResponse, 'runtimeName' | 'runtimeVersion'>): string {
  return `${version.runtimeName} ${version.runtimeVersion.replace(/^v(?=\d)/, '')}`
}

/** The first release of each runtime that has a feature (CRI field it reads). */
export const FEATURE_RELEASES = {
  /** CRI Mount.image (containerd internal/cri/server/container_image_mount.go; CRI-O container_create_linux.go). */
  imageVolumes: {what: 'mount image volumes', containerd: [2, 1], 'cri-o': [1, 31]},
  /** CRI Mount.image_sub_path. */
  imageVolumeSubPath: {what: 'mount a subPath of an image volume', containerd: [2, 2], 'cri-o': [1, 33]},
} as const satisfies Record<string, {what: string; containerd: Release; 'cri-o': Release}>

export type Feature = keyof typeof FEATURE_RELEASES

/**
 * Why this runtime cannot do `feature`, e.g. "containerd 2.0.5 cannot mount image volumes (containerd
 * 2.1+ or CRI-O 1.31+ can)"; undefined when it can, or is not one podctl knows the releases of.
 */
export function missingFeature(version: Pick<VersionResponse, 'runtimeName' | 'runtimeVersion'>, feature: Feature): string | undefined {
  const needs = FEATURE_RELEASES[feature]
  const since = version.runtimeName === 'containerd' || version.runtimeName === 'cri-o' ? needs[version.runtimeName] : undefined
  const release = majorMinor(version.runtimeVersion)
  if (!since || !release || !olderThan(release, since as Release)) return undefined
  const [ctrd, crio] = [needs.containerd.join('.'), needs['cri-o'].join('.')]
  return `${runtimeNamed(version)} cannot ${needs.what} (containerd ${ctrd}+ or CRI-O ${crio}+ can)`
}
