/**
 * Whose a pod log directory (`<logs root>/<namespace>_<name>_<uid>`) or a /var/log/containers link
 * is. Every runtime on the node, the kubelet and crictl's configs write into the same log root and
 * the same links directory, and the directories outlive their pods, so a directory's name says
 * nothing about who made it. podctl therefore marks each log directory it creates with a small
 * file naming the pod's uid and the runtime (POD_LOGS_MARK, written and read here only); a
 * directory that already existed is never marked (it may be someone else's). A link is podctl's
 * when it is a symbolic link into a log directory podctl can prove its own: marked for this
 * runtime, or named by a record of this runtime (ownership.ts).
 */
import {lstat, readdir, readFile, readlink, rm, writeFile} from 'node:fs/promises'
import {basename, dirname, isAbsolute, join, relative, resolve, sep} from 'node:path'

import {buildPodLogsDirectory} from '../../kube/helpers.js'
import {NOT_PODCTL, otherRuntime, type Ownership, type RecordedPod} from '../../kube/ownership.js'
import {recordEndpoint, recordOwner} from './record-owner.js'

/** The mark in a pod log directory podctl made; a dot file, so log shippers' `*.log` globs pass it by. */
export const POD_LOGS_MARK = '.podctl-pod.json'

interface PodLogsMark {
  madeBy: 'podctl'
  uid: string
  runtimeEndpoint: string
}

/**
 * Marks a pod log directory podctl has just created (`created`: mkdir made it). Best effort: an
 * unmarked directory is only one garbage collection leaves alone.
 */
export async function markPodLogDirectory(directory: string, created: boolean, pod: {uid: string; runtimeEndpoint: string}): Promise<void> {
  if (!created) return
  const mark: PodLogsMark = {madeBy: 'podctl', uid: pod.uid, runtimeEndpoint: recordEndpoint(pod.runtimeEndpoint)}
  await writeFile(join(directory, POD_LOGS_MARK), `${JSON.stringify(mark)}\n`, {mode: 0o644, flag: 'wx'}).catch(() => {})
}

async function readMark(directory: string): Promise<PodLogsMark | undefined> {
  try {
    const mark = JSON.parse(await readFile(join(directory, POD_LOGS_MARK), 'utf8')) as Partial<PodLogsMark>
    return mark?.madeBy === 'podctl' && typeof mark.uid === 'string' && typeof mark.runtimeEndpoint === 'string'
      ? (mark as PodLogsMark)
      : undefined
  } catch {
    return undefined
  }
}

/** The kubelet's parsePodUIDFromLogsDirectory: the namespace is the first "_" part, the uid the last. */
export function parsePodLogsDirectoryName(name: string): {namespace: string; podUid: string} | undefined {
  const parts = name.split('_')
  if (parts.length < 3 || parts.includes('')) return undefined
  return {namespace: parts[0], podUid: parts.at(-1)!}
}

const BY_MARK: Ownership = {ours: true, rule: 'podctl-mark', why: `made by podctl on this runtime (its ${POD_LOGS_MARK})`}

/** Whether the pod log directory `path` (named for the pod `uid`) is podctl's, on `runtime`. */
export async function podLogDirectoryOwnership(path: string, uid: string, runtime: string | undefined): Promise<Ownership> {
  const mark = await readMark(path)
  if (!mark) return {...NOT_PODCTL, why: `not made by podctl (no ${POD_LOGS_MARK})`}
  if (mark.uid !== uid) return {...NOT_PODCTL, why: `its ${POD_LOGS_MARK} names another pod`}
  if (recordOwner(mark.runtimeEndpoint, runtime) === 'other') return otherRuntime(mark.runtimeEndpoint)
  return BY_MARK
}

export interface LinkScope {
  logsRoot: string
  runtime: string | undefined
  /** The record (pod.json) of a pod uid, judged from `runtime`; undefined when there is none. */
  recordOf: (uid: string) => Promise<RecordedPod | undefined>
}

/**
 * Whether a /var/log/containers link is podctl's: a symbolic link (never a user's file) whose target
 * lies in a pod log directory under `logsRoot` that is podctl's: marked for this runtime, or named
 * by a record of this runtime (its namespace, name and uid). The target itself may be gone.
 */
export async function containerLogLinkOwnership(link: string, scope: LinkScope): Promise<Ownership> {
  const info = await lstat(link).catch(() => undefined)
  if (!info?.isSymbolicLink()) return {...NOT_PODCTL, why: 'not a link podctl makes (not a symbolic link)'}
  const target = await readlink(link).catch(() => '')
  const absolute = isAbsolute(target) ? target : resolve(dirname(link), target)
  const inRoot = relative(resolve(scope.logsRoot), absolute)
  const [directory, ...rest] = inRoot.split(sep)
  const parsed = parsePodLogsDirectoryName(directory ?? '')
  if (inRoot.startsWith('..') || isAbsolute(inRoot) || rest.length === 0 || !parsed) {
    return {...NOT_PODCTL, why: `not a link podctl makes (it points outside ${scope.logsRoot})`}
  }

  const path = join(resolve(scope.logsRoot), directory)
  const record = await scope.recordOf(parsed.podUid)
  if (record?.owner === 'other') return otherRuntime(record.runtimeEndpoint)
  if (record?.owner === 'this' && buildPodLogsDirectory(resolve(scope.logsRoot), record.namespace, record.name, record.uid) === path) {
    const why = `points into ${basename(path)}, the log directory of a pod podctl records for this runtime`
    return {ours: true, rule: 'podctl-record', why}
  }

  const owner = await podLogDirectoryOwnership(path, parsed.podUid, scope.runtime)
  return owner.ours ? {...owner, why: `points into ${basename(path)}, ${owner.why}`} : owner
}

/**
 * Removes a pod log directory podctl made for pod `uid` when it holds nothing but podctl's own mark
 * (no container wrote a byte: a pull that failed, a container that never started); resolves to
 * whether it went. A directory with any log content, or that podctl cannot prove it made, stays.
 */
export async function removeEmptyPodLogDirectory(directory: string, uid: string, runtime: string): Promise<boolean> {
  if (!(await podLogDirectoryOwnership(directory, uid, runtime)).ours) return false
  if (await holdsContent(directory, true)) return false
  await rm(directory, {recursive: true, force: true})
  return true
}

/** Whether a file under `directory` (the mark at its top aside) holds a byte; a directory that cannot be read counts as content. */
async function holdsContent(directory: string, top: boolean): Promise<boolean> {
  const entries = await readdir(directory, {withFileTypes: true}).catch(() => undefined)
  if (!entries) return true
  for (const entry of entries) {
    if (top && entry.name === POD_LOGS_MARK) continue
    const path = join(directory, entry.name)
    if (entry.isDirectory() ? await holdsContent(path, false) : !entry.isFile() || (await lstat(path)).size > 0) return true
  }

  return false
}
