/**
 * The kubelet's evictPodLogsDirectories: a directory <namespace>_<name>_<uid> under the pod logs
 * root goes when its pod is deleted. podctl's "deleted": the runtime has no sandbox with that UID
 * and no pod directory holds a record (pod.json) of it, of any runtime (a record of another runtime
 * is a pod living there). A directory changed within the last minute stays: `run` makes it before
 * the sandbox exists. Then the /var/log/containers links whose target is gone, unless their
 * container still runs (its log may be mid-rotation), as the kubelet removes dead links.
 */
import {readdir, rm, stat} from 'node:fs/promises'
import {join} from 'node:path'

import type {Container} from '../../../generated/runtime/v1/api.js'
import {DESIRED_POD_FILE} from '../core/record-owner.js'

/** podctl's own guard for a `run` in progress (the kubelet needs none: it knows the pods it is starting). */
export const POD_LOGS_MIN_AGE_MS = 60_000

export interface PodLogDirectory {
  path: string
  namespace: string
  podUid: string
}

/** The kubelet's parsePodUIDFromLogsDirectory: the last "_" part; the namespace is the first. */
export function parsePodLogsDirectoryName(name: string): {namespace: string; podUid: string} | undefined {
  const parts = name.split('_')
  if (parts.length < 3 || parts.includes('')) return undefined
  return {namespace: parts[0], podUid: parts.at(-1)!}
}

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
  /** UIDs of every sandbox the runtime has. */
  liveUids: ReadonlySet<string>
  /** UIDs recorded in pod directories. */
  recordedUids: ReadonlySet<string>
  /** Only this namespace's directories (podctl gc -n). */
  namespace?: string
  nowMs: number
}

/** The pod log directories of deleted pods. */
export async function podLogDirectoriesToRemove(scope: PodLogsScope): Promise<PodLogDirectory[]> {
  const entries = await readdir(scope.logsRoot, {withFileTypes: true}).catch(() => [])
  const found: PodLogDirectory[] = []
  for (const entry of entries) {
    const parsed = entry.isDirectory() ? parsePodLogsDirectoryName(entry.name) : undefined
    if (!parsed || scope.liveUids.has(parsed.podUid) || scope.recordedUids.has(parsed.podUid)) continue
    if (scope.namespace !== undefined && parsed.namespace !== scope.namespace) continue
    const path = join(scope.logsRoot, entry.name)
    const changed = await stat(path).catch(() => undefined)
    if (!changed || changed.mtimeMs > scope.nowMs - POD_LOGS_MIN_AGE_MS) continue
    found.push({path, ...parsed})
  }

  return found
}

/** The container ID of a link name <pod>_<namespace>_<container>-<id>.log, and its namespace. */
function parseLinkName(name: string): {namespace: string; containerId: string} | undefined {
  const match = /^[^_]+_([^_]+)_.+-([0-9a-f]{64})\.log$/.exec(name)
  return match ? {namespace: match[1], containerId: match[2]} : undefined
}

/** Links in `linksDir` whose log file is gone and whose container is not running. */
export async function deadContainerLogLinks(linksDir: string, containers: readonly Container[], namespace?: string): Promise<string[]> {
  const running = new Set(containers.filter((container) => container.state === 'CONTAINER_RUNNING').map((container) => container.id))
  const dead: string[] = []
  for (const name of await readdir(linksDir).catch(() => [] as string[])) {
    if (!name.endsWith('.log')) continue
    const parsed = parseLinkName(name)
    if (namespace !== undefined && parsed?.namespace !== namespace) continue
    if (parsed && running.has(parsed.containerId)) continue
    const target = await stat(join(linksDir, name)).catch((error: NodeJS.ErrnoException) => error)
    if (target instanceof Error && target.code === 'ENOENT') dead.push(join(linksDir, name))
  }

  return dead
}

export async function removePath(path: string): Promise<void> {
  await rm(path, {recursive: true, force: true})
}
