/**
 * The kubelet's evictPodLogsDirectories, on podctl's directories only: a directory
 * <namespace>_<name>_<uid> under the pod logs root goes when podctl can prove it made it on this
 * runtime (its mark, core/owned-logs.ts) and its pod is deleted. podctl's "deleted": the runtime
 * has no sandbox with that UID and no pod directory holds a record (pod.json) of it, of any runtime
 * (a record of another runtime is a pod living there). A directory changed within the last minute
 * stays: `run` makes it before the sandbox exists. The links into it go with it. Then the
 * /var/log/containers links whose target is gone, unless their container still runs (its log may
 * be mid-rotation), as the kubelet removes dead links, when they point into a log directory podctl
 * can prove its own. Directories and links of other tools, runtimes and users are counted as left alone.
 */
import {readdir, readlink, rm, stat} from 'node:fs/promises'
import {join} from 'node:path'

import type {Container} from '../../../generated/runtime/v1/api.js'
import {containerLogLinkOwnership, parsePodLogsDirectoryName, podLogDirectoryOwnership} from '../core/owned-logs.js'
import {readPodRecords} from '../core/pod-records.js'
import {DESIRED_POD_FILE} from '../core/record-owner.js'
import {type GcRound, removeDecided} from './round.js'

export {parsePodLogsDirectoryName} from '../core/owned-logs.js'

/** podctl's own guard for a `run` in progress (the kubelet needs none: it knows the pods it is starting). */
export const POD_LOGS_MIN_AGE_MS = 60_000

/** The UIDs some pod directory under `podDirRoot` records (it holds a pod.json). */
export async function recordedPodUids(podDirRoot: string): Promise<Set<string>> {
  const entries = await readdir(podDirRoot, {withFileTypes: true}).catch(() => [])
  const uids = new Set<string>()
  for (const entry of entries) {
    if (!entry.isDirectory()) continue
    const record = await stat(join(podDirRoot, entry.name, DESIRED_POD_FILE)).catch(() => undefined)
    if (record?.isFile()) uids.add(entry.name)
  }

  return uids
}

export interface PodLogsScope {
  logsRoot: string
  linksDir: string
  /** UIDs of every sandbox the runtime has (of any tool). */
  liveUids: ReadonlySet<string>
  /** UIDs recorded in pod directories (of any runtime). */
  recordedUids: ReadonlySet<string>
}

export interface CollectedPodLogs {
  directories: string[]
  /** Links into those directories, gone with them. */
  links: string[]
}

/** The pod log directories of deleted pods (any tool's), whose own age guard has passed. */
async function deletedPodsDirectories(round: GcRound, scope: PodLogsScope): Promise<Array<{path: string; podUid: string}>> {
  // In name order, so what a round says (and removes first) does not depend on the filesystem's order.
  const entries = (await readdir(scope.logsRoot, {withFileTypes: true}).catch(() => [])).sort((a, b) => a.name.localeCompare(b.name))
  const found: Array<{path: string; podUid: string}> = []
  for (const entry of entries) {
    const parsed = entry.isDirectory() ? parsePodLogsDirectoryName(entry.name) : undefined
    if (!parsed || scope.liveUids.has(parsed.podUid) || scope.recordedUids.has(parsed.podUid)) continue
    if (round.namespace !== undefined && parsed.namespace !== round.namespace) continue
    const path = join(scope.logsRoot, entry.name)
    const changed = await stat(path).catch(() => undefined)
    if (!changed || changed.mtimeMs > round.nowMs - POD_LOGS_MIN_AGE_MS) continue
    found.push({path, podUid: parsed.podUid})
  }

  return found
}

/** The round's log directory step: podctl's directories of deleted pods, and the links into them. */
export async function collectPodLogDirectories(round: GcRound, scope: PodLogsScope): Promise<CollectedPodLogs> {
  const collected: CollectedPodLogs = {directories: [], links: []}
  for (const {path, podUid} of await deletedPodsDirectories(round, scope)) {
    const owner = await podLogDirectoryOwnership(path, podUid, round.client.runtimeEndpoint)
    if (!owner.ours) {
      round.explanation.leftAlone('pod log directory', owner.why)
      continue
    }

    const links = await linksInto(scope.linksDir, path)
    const why = `${owner.why}; its pod is gone (no sandbox on this runtime, no record) and it is unchanged for a minute`
    if (!(await removeDecided(round, {kind: 'pod log directory', object: path, why}, () => removePath(path)))) continue
    collected.directories.push(path)
    for (const link of links) {
      const reason = {kind: 'log link' as const, object: link, why: `points into ${path}, which goes`}
      if (await removeDecided(round, reason, () => removePath(link))) collected.links.push(link)
    }
  }

  return collected
}

/** The links in `linksDir` that point into `directory`. */
async function linksInto(linksDir: string, directory: string): Promise<string[]> {
  const links: string[] = []
  for (const name of (await readdir(linksDir).catch(() => [] as string[])).sort()) {
    if (!name.endsWith('.log')) continue
    const target = await readlink(join(linksDir, name)).catch(() => undefined)
    if (target?.startsWith(`${directory}/`)) links.push(join(linksDir, name))
  }

  return links
}

/** The container ID of a link name <pod>_<namespace>_<container>-<id>.log, and its namespace. */
function parseLinkName(name: string): {namespace: string; containerId: string} | undefined {
  const match = /^[^_]+_([^_]+)_.+-([0-9a-f]{64})\.log$/.exec(name)
  return match ? {namespace: match[1], containerId: match[2]} : undefined
}

/** Links in `linksDir` whose log file is gone and whose container is not running (any tool's). */
export async function deadContainerLogLinks(linksDir: string, containers: readonly Container[], namespace?: string): Promise<string[]> {
  const running = new Set(containers.filter((container) => container.state === 'CONTAINER_RUNNING').map((container) => container.id))
  const dead: string[] = []
  for (const name of (await readdir(linksDir).catch(() => [] as string[])).sort()) {
    if (!name.endsWith('.log')) continue
    const parsed = parseLinkName(name)
    if (namespace !== undefined && parsed?.namespace !== namespace) continue
    if (parsed && running.has(parsed.containerId)) continue
    const target = await stat(join(linksDir, name)).catch((error: NodeJS.ErrnoException) => error)
    if (target instanceof Error && target.code === 'ENOENT') dead.push(join(linksDir, name))
  }

  return dead
}

/** The round's dead link step: dead links podctl can prove its own go; others' are counted as left alone. */
export async function collectDeadLinks(
  round: GcRound,
  scope: {linksDir: string; logsRoot: string; remaining: readonly Container[]; alreadyGone: readonly string[]},
): Promise<string[]> {
  const runtime = round.client.runtimeEndpoint
  const recordOf = async (uid: string) => round.records.get(uid) ?? (await readPodRecords(round.podDirRoot, runtime, [uid])).get(uid)
  const collected: string[] = []
  for (const link of await deadContainerLogLinks(scope.linksDir, scope.remaining, round.namespace)) {
    if (scope.alreadyGone.includes(link)) continue
    const owner = await containerLogLinkOwnership(link, {logsRoot: scope.logsRoot, runtime, recordOf})
    if (!owner.ours) {
      round.explanation.leftAlone('log link', owner.why)
      continue
    }

    const why = `${owner.why}; its log file is gone and its container is not running`
    if (await removeDecided(round, {kind: 'log link', object: link, why}, () => removePath(link))) collected.push(link)
  }

  return collected
}

export async function removePath(path: string): Promise<void> {
  await rm(path, {recursive: true, force: true})
}
