/**
 * The kubelet's legacy container log symlinks (kuberuntime_container.go legacyLogSymlink):
 * /var/log/containers/<pod>_<namespace>_<container>-<containerID>.log → the container's log file,
 * which log shippers (fluent-bit, promtail, vector) read. Made when a container is created,
 * removed with it. $PODCTL_CONTAINER_LOGS_DIR moves the directory (tests, unprivileged nodes).
 */
import {lstat, mkdir, rm, symlink} from 'node:fs/promises'
import {join} from 'node:path'

import type {Container} from '../../../generated/runtime/v1/api.js'
import {containerName, PodLabel} from '../../kube/labels.js'
import {cutToBytes, NAME_MAX} from '../../util/path-component.js'

export const DEFAULT_CONTAINER_LOGS_DIR = '/var/log/containers'

export function containerLogsDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.PODCTL_CONTAINER_LOGS_DIR || DEFAULT_CONTAINER_LOGS_DIR
}

/**
 * The kubelet's logSymlink name, at most 255 bytes with ".log". The kubelet cuts the end off, so the
 * links of a pod with a long name (up to 253 characters) lose their container ID and collide, one
 * container's link replacing another's; podctl cuts the pod's name instead, keeping
 * `_<namespace>_<container>-<id>` whole. Names that fit are the kubelet's exactly.
 */
export function containerLogLinkPath(dir: string, pod: {name: string; namespace: string}, container: string, containerId: string): string {
  const tail = `_${pod.namespace}_${container}-${containerId}`
  return join(dir, `${cutToBytes(pod.name, NAME_MAX - LOG_SUFFIX.length - Buffer.byteLength(tail))}${tail}${LOG_SUFFIX}`)
}

const LOG_SUFFIX = '.log'

/** Best effort, as in the kubelet: a failure is not the container's failure. */
export async function createContainerLogLink(
  pod: {name: string; namespace: string},
  container: {name: string; id: string; logPath: string},
  dir = containerLogsDir(),
): Promise<void> {
  const {logPath} = container
  try {
    await mkdir(dir, {recursive: true, mode: 0o755})
    const link = containerLogLinkPath(dir, pod, container.name, container.id)
    await rm(link, {force: true})
    await symlink(logPath, link)
  } catch {
    // The kubelet logs and goes on.
  }
}

/**
 * Removes the links of containers that are being removed (labels give pod, namespace and container
 * name; the name ends in the container's ID). Only a symbolic link goes: a file a user put there
 * under that name is not one of the links.
 */
export async function removeContainerLogLinks(
  containers: ReadonlyArray<Pick<Container, 'id' | 'labels' | 'metadata'>>,
  dir = containerLogsDir(),
): Promise<void> {
  await Promise.all(
    containers.map(async (container) => {
      const pod = container.labels[PodLabel.name]
      const namespace = container.labels[PodLabel.namespace]
      if (!pod || !namespace) return
      const link = containerLogLinkPath(dir, {name: pod, namespace}, containerName(container), container.id)
      if ((await lstat(link).catch(() => undefined))?.isSymbolicLink()) await rm(link, {force: true}).catch(() => {})
    }),
  )
}
