/**
 * The small shared vocabulary of the kubelet's kuberuntime helpers.go and kubecontainer: sort
 * orders, pod IPs, pod names in messages, short IDs, log paths, the restart count left in a log
 * directory, the crash back-off key and container states. Pure: no runtime calls, no files.
 */
import type {ContainerState, PodSandboxStatus} from '../../generated/runtime/v1/api.js'
import {compareNanosDesc} from '../util/time.js'
import {cutToBytes, NAME_MAX} from '../util/path-component.js'
import {containerHash} from './labels.js'

/** A pod's identity, as every message and key names it. */
/** The kubelet's podLogsRootDirectory: <root>/<namespace>_<name>_<uid>/<container>/<restart>.log. */
export const DEFAULT_POD_LOGS_ROOT = '/var/log/pods'
/** podctl's counterpart of the kubelet's /var/lib/kubelet/pods: one directory per pod uid. */
export const DEFAULT_POD_DIR_ROOT = '/var/lib/podctl/pods'
/** podctl's local-path-provisioner: one directory per PersistentVolumeClaim, <root>/<namespace>/<claim>. */
export const DEFAULT_CLAIMS_ROOT = '/var/lib/podctl/claims'

/** metav1.NamespaceDefault: the namespace of a pod that names none. */
export const DEFAULT_NAMESPACE = 'default'

export interface PodIdentity {
  name: string
  namespace: string
  uid: string
}

/** The kubelet's sort order for sandboxes and containers (podSandboxByCreated, containerStatusByCreated): newest first, then by ID. */
export function newestFirst(a: {createdAt: string; id: string}, b: {createdAt: string; id: string}): number {
  return compareNanosDesc(a.createdAt, b.createdAt) || a.id.localeCompare(b.id)
}

/** The pod IP as the kubelet reads it: `network.ip`, then the additional IPs. */
export function sandboxIps(status: PodSandboxStatus | undefined): string[] {
  if (!status?.network?.ip) return []
  return [status.network.ip, ...status.network.additionalIps.map((ip) => ip.ip)]
}

/** The kubelet's pod full name (kubecontainer.GetPodFullName): `name_namespace`. */
export function podFullName(name: string, namespace: string): string {
  return `${name}_${namespace}`
}

/** The kubelet's pod description in messages (format.Pod): `name_namespace(uid)`. */
export function podDescription(name: string, namespace: string, uid: string): string {
  return `${name}_${namespace}(${uid})`
}

/** The length crictl and podctl shorten IDs to. */
export const SHORT_ID_LENGTH = 13
/** A digest's algorithm, before its colon ("sha256"). */
const ALGORITHM = /^[a-z0-9]+$/

/** An ID as messages show it: without an algorithm prefix ("sha256:"), 13 characters. */
export function shortId(id: string): string {
  // A regular expression only when there is a colon: a listing shortens two IDs a row.
  const colon = id.indexOf(':')
  const start = colon > 0 && ALGORITHM.test(id.slice(0, colon)) ? colon + 1 : 0
  return id.slice(start, start + SHORT_ID_LENGTH)
}

/**
 * The kubelet's BuildPodLogsDirectory: `<logs root>/<namespace>_<name>_<uid>`. A name too long for
 * the whole to be one file name (a 253-character pod name) is cut so it fits, as the kubelet cuts
 * its log links: the namespace stays first and the uid last, where log readers and GC look.
 */
export function buildPodLogsDirectory(logsRoot: string, namespace: string, name: string, uid: string): string {
  const room = NAME_MAX - Buffer.byteLength(`${namespace}__${uid}`)
  return `${logsRoot.replace(/\/+$/, '')}/${namespace}_${cutToBytes(name, room)}_${uid}`
}

/** The kubelet's buildContainerLogsPath, relative to the pod's log directory: `<container>/<restart count>.log`. */
export function buildContainerLogsPath(containerName: string, restartCount: number): string {
  return `${containerName}/${restartCount}.log`
}

/**
 * The counting half of the kubelet's calcRestartCountByLogDir: a container with no status yet
 * continues after the highest `N.log` (or rotated `N.log.*`) among its log directory's files, so a
 * replaced pod never appends to an earlier attempt's log file.
 */
export function restartCountFromLogFiles(fileNames: readonly string[]): number {
  let count = 0
  for (const name of fileNames) {
    const match = /^(\d+)\.log(\..*)?$/.exec(name)
    if (match) count = Math.max(count, Number(match[1]) + 1)
  }

  return count
}

/** The kubelet's getStableKey: the crash back-off key of one container spec in one pod. */
export function stableKey(pod: PodIdentity, container: {name: string}): string {
  return `${pod.name}_${pod.namespace}_${pod.uid}_${container.name}_${containerHash(container)}`
}

/** A container's state as podctl reports it (the kubelet's toKubeContainerState, capitalised for display). */
export type KubeContainerState = 'Created' | 'Running' | 'Exited' | 'Unknown'

export function toKubeContainerState(state: ContainerState | string): KubeContainerState {
  switch (state) {
    case 'CONTAINER_CREATED':
      return 'Created'
    case 'CONTAINER_RUNNING':
      return 'Running'
    case 'CONTAINER_EXITED':
      return 'Exited'
    default:
      return 'Unknown'
  }
}
