/**
 * A running container as the host sees it: its main process (the pid the runtime reports in its
 * verbose ContainerStatus: containerd's and CRI-O's `info` document carry `pid`), and through it the
 * container's root (/proc/<pid>/root), namespaces and cgroups. Everything podctl does from the host
 * side into a container (cp, top, exec with a user, env or working directory) starts here.
 */
import type {CriClient} from '../cri/client.js'
import {HostAccessError} from '../errors.js'
import type {Container} from '../../generated/runtime/v1/api.js'
import {shortId} from '../kube/helpers.js'
import {containerName} from '../kube/labels.js'
import {parseVerboseInfo} from '../node/verbose-info.js'
import {startTicksOf} from '../util/process-start.js'

export interface ContainerProcess {
  containerId: string
  /** The container's name, for messages. */
  name: string
  /** Its main process on the host. */
  pid: number
  /** That process's start time, so a pid reused meanwhile is not taken for it. */
  startTicks?: number
  /** /proc/<pid>/root: the container's "/" as its processes see it, mounts included. */
  root: string
}

/** `name (1a2b3c4d5e6f)`, as messages name a container. */
export function containerLabel(container: Pick<Container, 'id' | 'labels' | 'metadata'>): string {
  const name = containerName(container)
  return `${name ? `${name} ` : ''}(${shortId(container.id)})`
}

/** The container of a process found, as messages name it. */
export function processLabel(target: Pick<ContainerProcess, 'containerId' | 'name'>): string {
  return `${target.name} (${shortId(target.containerId)})`
}

/** The pid in a verbose info map: the first JSON value with a positive integer `pid`. */
export function pidFromVerboseInfo(info: Readonly<Record<string, string>> | undefined): number | undefined {
  for (const value of Object.values(parseVerboseInfo(info))) {
    const pid = (value as {pid?: unknown} | null)?.pid
    if (typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0) return pid
  }

  return undefined
}

/** The running container's main process, from the runtime's verbose status; refused for a container that is not running. */
export async function containerProcess(client: CriClient, container: Container, signal?: AbortSignal): Promise<ContainerProcess> {
  const label = containerLabel(container)
  const {status, info} = await client.runtime('containerStatus', {containerId: container.id, verbose: true}, {signal})
  const state = status?.state ?? container.state
  if (state !== 'CONTAINER_RUNNING') {
    const words = state.replace(/^CONTAINER_/, '').toLowerCase()
    throw new HostAccessError(`container ${label} is not running (${words}): podctl reaches into a container through its running process`)
  }

  const pid = pidFromVerboseInfo(info)
  if (pid === undefined) {
    throw new HostAccessError(
      `the runtime at ${client.runtimeEndpoint} did not say which process runs container ${label} (no pid in its verbose status)`,
    )
  }

  const startTicks = startTicksOf(pid)
  if (startTicks === undefined) {
    throw new HostAccessError(
      `process ${pid} of container ${label} is not visible in /proc: run podctl on the node itself, as root, in the host's pid namespace`,
    )
  }

  return {containerId: container.id, name: containerName(container) || shortId(container.id), pid, startTicks, root: `/proc/${pid}/root`}
}

/** The container's process is still the one podctl found (a container restarted meanwhile has another). */
export function stillRunning(process_: Pick<ContainerProcess, 'pid' | 'startTicks'>): boolean {
  return process_.startTicks !== undefined && startTicksOf(process_.pid) === process_.startTicks
}
