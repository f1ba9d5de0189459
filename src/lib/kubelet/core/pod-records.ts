/**
 * The records (pod.json) the ownership proof (kube/ownership.ts) reads: of the pods a garbage
 * collection round lists, each judged from the runtime it runs against (record-owner.ts), with the
 * names of the pod and its containers a record must match to prove an object podctl's.
 */
import {existsSync, readFileSync} from 'node:fs'
import {readdir} from 'node:fs/promises'
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
 * Read synchronously, and each recorded endpoint judged once: measured on 500 records of 3 KB,
 * 7-25 ms, where fs/promises' readFile of each took 100-180 ms and judging each record's endpoint
 * (two realpath calls) 17-74 ms more, every garbage collection round.
 */
export async function readPodRecords(podDirRoot: string, runtime: string | undefined, uids?: Iterable<string>): Promise<PodRecords> {
  const names =
    uids === undefined
      ? (await readdir(podDirRoot, {withFileTypes: true}).catch(() => [])).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
      : [...new Set(uids)]
  const judged = new Map<string | undefined, Pick<RecordedPod, 'owner' | 'runtimeEndpoint'>>()
  const judge = (recorded: string | undefined) => {
    let verdict = judged.get(recorded)
    if (!verdict) {
      verdict = {owner: recordOwner(recorded, runtime), ...(recorded === undefined ? {} : {runtimeEndpoint: recordEndpoint(recorded)})}
      judged.set(recorded, verdict)
    }

    return verdict
  }

  const records = new Map<string, RecordedPod>()
  for (const uid of names.filter(isUidName)) {
    const record = readRecord(join(podDirRoot, uid, DESIRED_POD_FILE), uid, judge)
    if (record) records.set(uid, record)
  }

  return records
}

/** The fields of a pod.json the proof reads (desired-state.ts writes the whole pod model). */
type RecordJson = Partial<Record<'uid' | 'name' | 'namespace' | 'runtimeEndpoint' | 'containers' | 'initContainers', unknown>>

function readRecord(
  path: string,
  uid: string,
  judge: (recorded: string | undefined) => Pick<RecordedPod, 'owner' | 'runtimeEndpoint'>,
): RecordedPod | undefined {
  // Most uids a round asks about have no record (other tools' pods): no exception for each of them.
  if (!existsSync(path)) return undefined
  let json: RecordJson
  try {
    json = JSON.parse(readFileSync(path, 'utf8')) as RecordJson
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
    ...judge(recorded),
    containers: [...names(json.containers), ...names(json.initContainers)],
  }
}
