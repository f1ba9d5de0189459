/**
 * `podctl top POD|CONTAINER`: the processes of each running container, read from the host's /proc
 * (kubectl top and crictl have no per-process view; `crictl exec CID ps` needs a ps in the image).
 * A container's processes are those in its own cgroup (or below it), so a debug container that
 * shares its PID namespace is listed apart; each process is shown with its pid inside the
 * container and on the host, its user as the container names it, CPU as ps computes %CPU (CPU time
 * over the time since it started), resident memory and its command line.
 */
import type {CriClient} from '../cri/client.js'
import {AmbiguousError, NotFoundError} from '../errors.js'
import type {Container} from '../../generated/runtime/v1/api.js'
import {resolveContainer, resolvePodSandboxes} from '../node/resolve.js'
import {containerCgroup, inCgroup} from './cgroups.js'
import {containerLabel, containerProcess, type ContainerProcess} from './container-process.js'
import {ContainerRoot} from './container-root.js'
import {userNames} from './container-user.js'
import {
  CLOCK_TICKS_PER_SECOND,
  idInside,
  listPids,
  readCgroups,
  readCmdline,
  readIdMap,
  readStat,
  readStatus,
  uptimeSeconds,
} from './proc.js'

export interface TopProcess {
  /** The container's name and ID. */
  container: string
  containerId: string
  /** The pid as the container sees it (its own PID namespace). */
  pid: number
  /** The same process on the host. */
  hostPid: number
  /** The user as the container's /etc/passwd names it, else the uid inside the container. */
  user: string
  /** CPU time over the time since the process started, in percent of one core (ps's %CPU). */
  cpuPercent: number
  rssBytes: number
  /** The command line, or the kernel's name in brackets for a process without one. */
  command: string
}

/** The processes of one container whose main process was found (pure given /proc; unit tested on local processes). */
export function containerProcesses(target: ContainerProcess, pids: readonly number[] = listPids()): TopProcess[] {
  const own = readCgroups(target.pid)
  const cgroup = own === undefined ? undefined : containerCgroup(own, target.containerId)
  const members = cgroup === undefined ? [target.pid] : pids.filter((pid) => inCgroup(readCgroups(pid) ?? [], cgroup))
  const uidMap = readIdMap(target.pid, 'uid')
  let nameOf: (uid: number) => string = String
  try {
    using root = ContainerRoot.open(target.root, target.name)
    nameOf = userNames(root)
  } catch {
    // No names to show (the root could not be read): numbers.
  }

  const now = uptimeSeconds()
  const rows: TopProcess[] = []
  for (const pid of members) {
    const row = processRow(pid, target, now, (uid) => nameOf(idInside(uidMap, uid) ?? uid))
    if (row) rows.push(row)
  }

  return rows.sort((a, b) => a.pid - b.pid)
}

function processRow(pid: number, target: ContainerProcess, now: number, user: (hostUid: number) => string): TopProcess | undefined {
  const stat = readStat(pid)
  const status = readStatus(pid)
  const cmdline = readCmdline(pid)
  if (!stat || !status || cmdline === undefined) return undefined // exited while read
  const elapsed = now - stat.startTicks / CLOCK_TICKS_PER_SECOND
  const cpuSeconds = stat.cpuTicks / CLOCK_TICKS_PER_SECOND
  return {
    container: target.name,
    containerId: target.containerId,
    pid: status.nsPids.at(-1) ?? pid,
    hostPid: pid,
    user: user(status.uid),
    cpuPercent: elapsed > 0 ? Math.round((cpuSeconds / elapsed) * 1000) / 10 : 0,
    rssBytes: status.rssBytes,
    command: cmdline.length > 0 ? cmdline.join(' ') : `[${stat.comm}]`,
  }
}

/** The running containers `ref` names: a container (ID prefix or POD/CONTAINER), else every running container of a pod. */
async function containersOf(client: CriClient, ref: string, namespace?: string): Promise<Container[]> {
  let notOne: unknown
  try {
    return [await resolveContainer(client, ref, {namespace})]
  } catch (error) {
    // A pod of several containers is no one container (AmbiguousError): top takes them all.
    if (!(error instanceof NotFoundError || error instanceof AmbiguousError) || ref.includes('/')) throw error
    notOne = error
  }

  const [newest] = await resolvePodSandboxes(client, ref, {namespace}).catch((error: unknown) => {
    throw error instanceof NotFoundError ? notOne : error
  })
  const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: newest.id}})
  const running = containers.filter((container) => container.state === 'CONTAINER_RUNNING')
  if (running.length === 0) throw new NotFoundError(`pod ${ref} has no running container; top reads the processes of running ones`)
  return running.sort((a, b) => containerLabel(a).localeCompare(containerLabel(b)))
}

/** The processes of the container, or of every running container of the pod, `ref` names. */
export async function top(client: CriClient, ref: string, options: {namespace?: string; signal?: AbortSignal} = {}): Promise<TopProcess[]> {
  const containers = await containersOf(client, ref, options.namespace)
  const pids = listPids()
  const rows: TopProcess[] = []
  for (const container of containers) {
    rows.push(...containerProcesses(await containerProcess(client, container, options.signal), pids))
  }

  return rows
}
