/**
 * The records (pod.json) the ownership proof (kube/ownership.ts) reads: of the pods a garbage
 * collection round lists, each judged from the runtime it runs against (record-owner.ts), with the
 * names of the pod and its containers a record must match to prove an object podctl's.
 */
import {readdir, readFile} from 'node:fs/promises'
import {join} from 'node:path'

import type {PodRecords, RecordedPod} from '../../kube/ownership.js'
import {DESIRED_POD_FILE, recordEndpoint, recordOwner} from './record-owner.js'

/** A directory name that can be a pod uid (never a path out of the root). */
function isUidName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0')
}

/**
 * The records under `podDirRoot` of the pods `uids` (every pod directory when omitted), judged
 * from `runtime`. A record whose uid is not its directory's, or that cannot be read, is no record.
 */
export async function readPodRecords(podDirRoot: string, runtime: string | undefined, uids?: Iterable<string>): Promise<PodRecords> {
  const names =
    uids === undefined
      ? (await readdir(podDirRoot, {withFileTypes: true}).catch(() => [])).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
      : [...new Set(uids)]
  const records = new Map<string, RecordedPod>()
  await Promise.all(
    names.filter(isUidName).map(async (uid) => {
      const record = await readRecord(join(podDirRoot, uid, DESIRED_POD_FILE), uid, runtime)
      if (record) records.set(uid, record)
    }),
  )
  return records
}

/** The fields of a pod.json the proof reads (desired-state.ts writes the whole pod model). */
type RecordJson = Partial<Record<'uid' | 'name' | 'namespace' | 'runtimeEndpoint' | 'containers' | 'initContainers', unknown>>

async function readRecord(path: string, uid: string, runtime: string | undefined): Promise<RecordedPod | undefined> {
  let json: RecordJson
  try {
    json = JSON.parse(await readFile(path, 'utf8')) as RecordJson
  } catch {
    return undefined
  }

  if (typeof json !== 'object' || json === null || json.uid !== uid) return undefined
  const names = (list: unknown) =>
    Array.isArray(list) ? list.flatMap((item: {name?: unknown}) => (typeof item?.name === 'string' ? [item.name] : [])) : []
  const recorded = typeof json.runtimeEndpoint === 'string' && json.runtimeEndpoint.trim() !== '' ? json.runtimeEndpoint : undefined
  return {
    uid,
    name: typeof json.name === 'string' ? json.name : '',
    namespace: typeof json.namespace === 'string' ? json.namespace : '',
    owner: recordOwner(recorded, runtime),
    ...(recorded === undefined ? {} : {runtimeEndpoint: recordEndpoint(recorded)}),
    containers: [...names(json.containers), ...names(json.initContainers)],
  }
}
